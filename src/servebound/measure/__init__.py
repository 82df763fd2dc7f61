"""Measure this machine: sustained memory bandwidth R and dense compute F per mode, as a hardware file.

The figures are measured sustained rates (the derivation's *estimate* reading), not vendor peaks.
Entry point: :func:`servebound.measure.machine.measure_machine`, then
:func:`servebound.measure.hardware_file.hardware_file` to write the result in the contract's
hardware-file format with provenance keys.

    measurement = measure_machine(preset="quick", progress=lambda label, done: print(label, done))
    print(hardware_file(measurement).text)

Each name is imported from its submodule: a process that only detects the machine (the site's home
page, ``measure.detect``) loads neither the kernels nor numpy.
"""
