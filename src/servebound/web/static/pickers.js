/* The home page's pickers: type a name as people write it (each input's datalist holds the catalog's
 * ids and names), and "my machine": the hardware last asked about is remembered in this browser
 * (localStorage) and offered first, already chosen. No framework; the form works without script. */
(function () {
  "use strict";
  var KEY = "servebound.machine";

  function remembered() {
    try { return window.localStorage.getItem(KEY); } catch (e) { return null; }
  }

  function init() {
    var form = document.getElementById("pick"), list = document.getElementById("pick-hardware");
    if (!form || !list) return;
    var input = form.elements.hardware, saved = remembered();
    var option = saved && Array.prototype.filter.call(list.options, function (o) { return o.value === saved; })[0];
    if (option) {
      list.insertBefore(option, list.firstChild);  // offered first
      input.value = saved;
      var note = document.getElementById("pick-machine");
      if (note) {
        note.querySelector("strong").textContent = option.textContent;
        note.hidden = false;
      }
    }
    form.addEventListener("submit", function () {
      try { window.localStorage.setItem(KEY, input.value.trim()); } catch (e) { /* private mode: not kept */ }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
