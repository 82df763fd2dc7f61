/* The pickers and the search, on every page that has them (the home page, each pair page, the static
 * copy's calculator, /search). Type a name as people write it: the list under the field offers the
 * catalog's matches, best first, from the one search (`servebound search`): /api/search on a served
 * site, and on a static copy the same search over data/names.json, which the export writes from
 * catalog.search.browser_index (the names the resolver takes whole, with the ids it gives them, and each
 * entry's words in search's order). A name not chosen from the list is resolved where the pair is
 * answered: by the server (catalog/names.py), or on a static copy from the same table.
 * A field shows the name of what it holds (the catalog's display name: "NVIDIA H100 SXM5 80GB",
 * "Llama-3.3-70B-Instruct (Q4_K_M)") and keeps its id in data-id; the list offers names with words
 * (a format as people write it), never an id. Without script a form sends the name, which the server
 * takes back (a row's display name is a name the catalog resolves).
 * "My machine": the hardware last chosen is remembered in this browser (localStorage) and offered
 * first in every hardware picker. No framework; without script the forms still submit. */
(function () {
  "use strict";
  var KEY = "servebound.machine", PICKED = "servebound.picked", LIMIT = 10;
  var BASE = (document.documentElement.getAttribute("data-base") || "").replace(/\/$/, "");
  var STATIC = document.body.dataset.mode === "static";
  var KEPT = ["hardware", "model", "profile", "section"];  // not workload inputs: not carried to the next pair

  // --- my machine -----------------------------------------------------------------------------------
  function machine() {
    var text = null;
    try { text = window.localStorage.getItem(KEY); } catch (e) { return null; }
    if (!text) return null;
    try {
      var kept = JSON.parse(text);
      if (kept && typeof kept.id === "string") return { id: kept.id, name: kept.name || kept.id };
    } catch (e) { /* an id kept by an earlier version of this page */ }
    return { id: text, name: text };
  }

  function remember(id, name) {
    try { window.localStorage.setItem(KEY, JSON.stringify({ id: id, name: name || id })); } catch (e) { /* private mode */ }
  }

  // --- the search: the server's, or the shipped index's -----------------------------------------------
  var index = null;
  function loadIndex() {
    if (!index) {
      index = fetch(BASE + "/data/names.json").then(function (r) {
        if (!r.ok) throw new Error("no names index on this copy");
        return r.json();
      });
    }
    return index;
  }

  // catalog.names.tokens: lower case, split at anything but letters, digits and dots; a word like qwen3
  // split into name and version, sizes (30b, a3b, 8x7b) kept whole.
  function tokens(ix, text) {
    var size = new RegExp(ix.size), out = [];
    text.toLowerCase().split(/[^a-z0-9.]+/).forEach(function (word) {
      word = word.replace(/^\.+|\.+$/g, "");
      if (!word) return;
      if (size.test(word) || /^\d+$/.test(word)) { out.push(word); return; }
      (word.match(/[a-z]+|\d+(?:\.\d+)*/g) || []).forEach(function (p) {
        p = p.replace(/^\.+|\.+$/g, "");
        if (p) out.push(p);
      });
    });
    return out;
  }

  // catalog.search._begins: the same word, or (a word with a letter) its beginning; a number only whole.
  function begins(q, w) { return w === q || (!/^[\d.]+$/.test(q) && w.indexOf(q) === 0); }
  function covers(wanted, words) { return wanted.every(function (q) { return words.some(function (w) { return begins(q, w); }); }); }
  function extra(wanted, own) { return own.filter(function (w) { return !wanted.some(function (q) { return begins(q, w); }); }).length; }

  // catalog.search.search over the shipped index: the name typed whole first, then every entry whose
  // words the typed words begin, by version, then the fewest words beyond those typed, then catalog order.
  function localSearch(ix, query, kind, limit) {
    var key = query.trim().toLowerCase(), named = ix.names[key], words = key.split(/\s+/), quant = null;
    var last = words.length > 1 ? words[words.length - 1].replace(/-/g, "_") : null;
    if (last && ix.quants[last]) { quant = last; words.pop(); }
    var wanted = tokens(ix, words.join(" ")), ranked = [];
    if (!wanted.length && !named) return [];
    if (wanted.length) ix.entries.forEach(function (e) {
      if (kind && e.kind !== kind) return;
      if (e.kind === "hardware" && quant) return;
      if (!covers(wanted, e.words)) return;
      var id = e.id, name = e.name, detail = e.detail;
      if (e.kind === "model") {
        var fmt = quant ? ix.quants[quant].filter(function (f) { return e.profiles[f]; })[0] : null;
        id = quant ? (fmt && e.profiles[fmt]) : e.native;
        if (!id) return;
        fmt = fmt || formatOf(e, id);
        name = e.names[fmt];
        detail = e.details[fmt];
      }
      ranked.push({ key: [e.version, extra(wanted, e.own), e.order, e.kind === "model" ? 0 : 1],
        hit: { kind: e.kind, id: id, name: name, detail: detail } });
    });
    ranked.sort(function (a, b) {
      for (var i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i] - b.key[i];
      return 0;
    });
    var hits = ranked.map(function (r) { return r.hit; });
    if (named && (!kind || named[0] === kind)) {
      var first = hits.filter(function (h) { return h.id === named[1]; })[0] || entryHit(ix, named[0], named[1]);
      hits = [first].concat(hits.filter(function (h) { return h.id !== named[1]; }));
    }
    return hits.slice(0, limit);
  }

  // A model entry's weight format of one of its profiles.
  function formatOf(e, id) { return Object.keys(e.profiles).filter(function (f) { return e.profiles[f] === id; })[0]; }

  function entryHit(ix, kind, id) {
    // The first entry that holds the id, and the format of its profile (the search stops there: a
    // later entry must not reset the format found).
    var fmt = null, e = null;
    ix.entries.some(function (x) {
      if (x.kind !== kind) return false;
      fmt = x.id === id ? null : (x.profiles ? formatOf(x, id) : null);
      if (x.id === id || fmt) e = x;
      return !!e;
    });
    if (!e) return { kind: kind, id: id, name: id, detail: "" };
    return { kind: kind, id: id, name: fmt ? e.names[fmt] : e.name, detail: fmt ? e.details[fmt] : e.detail };
  }

  function search(query, kind, limit) {
    if (!query.trim()) return Promise.resolve([]);
    if (STATIC) return loadIndex().then(function (ix) { return localSearch(ix, query, kind, limit); });
    var params = new URLSearchParams({ q: query, limit: String(limit) });
    if (kind) params.set("kind", kind);
    return fetch(BASE + "/api/search?" + params.toString()).then(function (r) {
      return r.ok ? r.json().then(function (body) { return body.hits; }) : [];
    });
  }

  // A name typed but not chosen, on a static copy: the resolver's table, else the search's first hit.
  function resolve(text, kind) {
    return loadIndex().then(function (ix) {
      var named = ix.names[text.trim().toLowerCase()];
      if (named && named[0] === kind) return entryHit(ix, kind, named[1]);
      return localSearch(ix, text, kind, 1)[0] || null;
    });
  }

  // --- a picker: a field with a list of matches under it ----------------------------------------------
  // A field holds a choice: it shows the name, and keeps the id for the address.
  function hold(input, id, name) {
    input.value = name || id;
    input.dataset.id = id;
    input.dataset.name = name || id;
  }

  // Whether the field still shows its choice (its name, or its id as an older address typed it).
  function holds(input) {
    var text = input.value.trim();
    return !!input.dataset.id && (text === input.dataset.name || text === input.dataset.id);
  }

  var serial = 0;
  function attach(input) {
    var kind = input.dataset.pick, list = document.createElement("ul"), hits = [], active = -1, timer = null;
    var wrap = document.createElement("span"), label = input.closest("label") || input;
    serial += 1;
    list.id = "picker-list-" + serial;
    list.className = "picker-list";
    list.setAttribute("role", "listbox");
    list.hidden = true;
    wrap.className = "picker-field";
    label.parentNode.insertBefore(wrap, label);
    wrap.appendChild(label);
    wrap.appendChild(list);
    input.removeAttribute("list");  // the list below replaces the browser's own
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-controls", list.id);

    function show(found) {
      var mine = kind === "hardware" ? machine() : null;
      hits = found.slice();
      if (mine) {
        hits = hits.filter(function (h) { return h.id !== mine.id; });
        hits.unshift({ kind: "hardware", id: mine.id, name: mine.name, detail: "your machine, remembered in this browser", mine: true });
      }
      list.textContent = "";
      hits.forEach(function (h, i) {
        var li = document.createElement("li"), strong = document.createElement("strong"), small = document.createElement("span");
        li.id = list.id + "-" + i;
        li.setAttribute("role", "option");
        li.dataset.id = h.id;
        if (h.mine) li.className = "mine";
        strong.textContent = (h.mine ? "My machine: " : "") + h.name;
        small.className = "src";
        small.textContent = h.mine ? "" : " " + h.detail;
        li.appendChild(strong);
        li.appendChild(small);
        li.addEventListener("mousedown", function (ev) { ev.preventDefault(); choose(i); });
        list.appendChild(li);
      });
      active = -1;
      list.hidden = !hits.length;
      input.setAttribute("aria-expanded", hits.length ? "true" : "false");
      input.removeAttribute("aria-activedescendant");
    }

    function lookup() {
      var text = input.value;
      var typed = holds(input) ? "" : text;  // the current choice: offer my machine alone
      search(typed, kind, LIMIT).then(function (found) { if (input.value === text) show(found); }).catch(function () { show([]); });
    }

    function mark(i) {
      active = i;
      Array.prototype.forEach.call(list.children, function (li, j) { li.setAttribute("aria-selected", j === i ? "true" : "false"); });
      if (i >= 0) { input.setAttribute("aria-activedescendant", list.children[i].id); list.children[i].scrollIntoView({ block: "nearest" }); }
    }

    function close() { list.hidden = true; input.setAttribute("aria-expanded", "false"); }

    function choose(i) {
      var h = hits[i];
      if (!h) return;
      hold(input, h.id, h.name);
      close();
      var form = input.form;
      if (form && form.hasAttribute("data-go")) go(form);
    }

    input.addEventListener("input", function () {
      delete input.dataset.id;
      clearTimeout(timer);
      timer = setTimeout(lookup, STATIC ? 0 : 120);
    });
    input.addEventListener("focus", function () { input.select(); lookup(); });
    input.addEventListener("blur", close);
    input.addEventListener("keydown", function (ev) {
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        if (list.hidden) { lookup(); return; }
        var n = hits.length, step = ev.key === "ArrowDown" ? 1 : -1;
        mark(n ? (active + step + n) % n : -1);
      } else if (ev.key === "Enter" && !list.hidden && active >= 0) {
        ev.preventDefault();
        choose(active);
      } else if (ev.key === "Escape") {
        close();
      }
    });
  }

  // --- going to a pair ---------------------------------------------------------------------------------
  // The workload inputs of this page's address, carried to the next pair.
  function workload() {
    var rest = new URLSearchParams(location.search);
    KEPT.forEach(function (k) { rest.delete(k); });
    return rest;
  }

  function say(form, text) {
    var p = form.querySelector(".picker-error");
    if (!p) {
      p = document.createElement("p");
      p.className = "note picker-error";
      p.setAttribute("role", "alert");
      form.appendChild(p);
    }
    p.textContent = text;
  }

  function chosen(input) {
    var id = holds(input) ? input.dataset.id : null;
    return { id: id, name: id ? input.dataset.name : input.value, text: input.value.trim() };
  }

  function calculatorHref(params) {
    return BASE + "/pair/" + (location.protocol === "file:" ? "index.html" : "") + "?" + params.toString();
  }

  function go(form) {
    var hw = chosen(form.elements.hardware), model = chosen(form.elements.model), rest = workload();
    if (!hw.text || !model.text) return;
    // My machine is the hardware chosen, not the one of a pair page where only the model changed.
    var mineNow = !form.dataset.hardwareId || (hw.id || hw.text) !== form.dataset.hardwareId;
    if (!STATIC) {
      if (mineNow && hw.id) remember(hw.id, hw.name);
      else if (mineNow) try { window.sessionStorage.setItem(PICKED, "1"); } catch (e) { /* not kept */ }
      if (hw.id && model.id) {
        var tail = rest.toString();
        location.assign(BASE + "/pair/" + encodeURIComponent(hw.id) + "/" + encodeURIComponent(model.id) + (tail ? "?" + tail : ""));
        return;
      }
      rest.set("hardware", hw.text);
      rest.set("model", model.text);
      location.assign(BASE + "/pair?" + rest.toString());  // the server resolves the names (catalog/names.py)
      return;
    }
    Promise.all([hw.id ? hw : resolve(hw.text, "hardware"), model.id ? model : resolve(model.text, "model")]).then(function (found) {
      if (!found[0]) { say(form, "No hardware on this copy is named " + JSON.stringify(hw.text) + "; pick one from the list."); return; }
      if (!found[1]) { say(form, "No model on this copy is named " + JSON.stringify(model.text) + "; pick one from the list."); return; }
      if (mineNow) remember(found[0].id, found[0].name);
      var params = new URLSearchParams({ hardware: found[0].id, model: found[1].id });
      rest.forEach(function (v, k) { params.append(k, v); });
      location.assign(calculatorHref(params));
    }).catch(function (err) { say(form, String(err.message || err)); });
  }

  function wireForm(form) {
    var hw = form.elements.hardware, mine = machine();
    if (form.dataset.hardwareId) {  // a pair page: its own pair is the current choice
      hold(hw, form.dataset.hardwareId, form.dataset.hardwareName);
      hold(form.elements.model, form.dataset.modelId, form.dataset.modelName);
      var picked = null;
      try { picked = window.sessionStorage.getItem(PICKED); window.sessionStorage.removeItem(PICKED); } catch (e) { /* not kept */ }
      if (picked) remember(form.dataset.hardwareId, form.dataset.hardwareName);
    } else if (mine && hw) {  // the home page: my machine already chosen
      hold(hw, mine.id, mine.name);
      var note = document.getElementById("pick-machine");
      if (note) { note.querySelector("strong").textContent = mine.name; note.hidden = false; }
    } else if (hw && hw.dataset.id) {  // the home page: the machine it suggests
      hold(hw, hw.dataset.id, hw.dataset.name);
    }
    form.querySelectorAll("input[data-pick]").forEach(attach);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); go(form); });
  }

  // --- the search page on a static copy: the hits of ?q= from the shipped index -------------------------
  // Each model hit of the search page links its pair on my machine.
  function onMyMachine(box) {
    var mine = machine();
    if (!mine) return;
    box.querySelectorAll("li[data-kind=model]").forEach(function (li) {
      var a = document.createElement("a"), params = new URLSearchParams({ hardware: mine.id, model: li.dataset.id });
      a.className = "on-mine";
      a.href = STATIC ? calculatorHref(params) : BASE + "/pair/" + encodeURIComponent(mine.id) + "/" + encodeURIComponent(li.dataset.id);
      a.textContent = "on my machine (" + mine.name + ")";
      li.appendChild(document.createTextNode(" · "));
      li.appendChild(a);
    });
  }

  function searchPage() {
    var box = document.getElementById("search-hits");
    if (box && !STATIC) onMyMachine(box);
    if (!box || !STATIC) return;
    var q = new URLSearchParams(location.search).get("q") || "", field = document.querySelector("#search input[name=q]");
    if (field) field.value = q;
    if (!q.trim()) return;
    var hint = document.getElementById("search-try");
    if (hint) hint.hidden = true;
    loadIndex().then(function (ix) {
      var hits = localSearch(ix, q, null, 50), count = document.getElementById("search-count");
      if (count) count.textContent = hits.length ? hits.length + (hits.length === 1 ? " match" : " matches") + " for " + JSON.stringify(q) + ", best first." : "Nothing here is named " + JSON.stringify(q) + ".";
      hits.forEach(function (h) {
        var li = document.createElement("li"), a = document.createElement("a"), small = document.createElement("span");
        li.dataset.kind = h.kind;
        li.dataset.id = h.id;
        a.href = BASE + "/" + (h.kind === "model" ? "models" : "hardware") + "/" + encodeURIComponent(h.id) + (location.protocol === "file:" ? "/index.html" : "/");
        a.textContent = h.name;
        small.className = "src";
        small.textContent = " " + h.kind + " · " + h.detail;
        li.appendChild(a);
        li.appendChild(small);
        box.appendChild(li);
      });
      onMyMachine(box);
    }).catch(function (err) {
      var count = document.getElementById("search-count");
      if (count) count.textContent = String(err.message || err);
    });
  }

  function init() {
    document.querySelectorAll("form[data-picker]").forEach(wireForm);
    searchPage();
  }

  window.servebound_pickers = { search: search, resolve: resolve, machine: machine, remember: remember, hold: hold };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
