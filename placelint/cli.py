"""The ``placelint`` command line (Typer).

Importing this module must stay cheap and must never import TensorFlow: it runs on every
commit as a pre-commit hook. This module only builds the app: each command lives in its own
module in ``placelint/commands/`` and declares itself with ``commands._common.command``
(options, exit codes and the helpers the commands share are there too);
``_register_commands`` imports those modules and adds their commands to ``app``. Heavy
imports happen inside the command functions.
"""

from __future__ import annotations

import gc
import os
import signal
import sys

import typer

from . import __version__
from .commands._common import COMMANDS, EXIT_ERROR
from .commands._values import Command, Group

#: Ctrl-C's exit status, as a shell reports a process killed by SIGINT (128 + 2)
EXIT_INTERRUPTED = 130

app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode=None,
                  pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Static analysis of TensorFlow device placement and parallelism.")


def _version(value: bool):
    if value:
        typer.echo(f"placelint {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(version: bool = typer.Option(False, "--version", callback=_version,
                                               is_eager=True, help="Show the version and exit.")):
    pass


def _register_commands(argv: list[str] | None = None):
    """Import the command modules and add the commands they declare to ``app``: all of
    them, or when ``argv`` (the program's arguments) starts with a command that a module
    of its name declares (``placelint check ...``), that module's only. Typer makes a
    click command of every function registered, reading its signature: for the nine
    commands ~10 ms, a twentieth of a cold ``check``, spent on eight that do not run.
    Anything else (``--help``, a mistyped or an unlisted name) registers all of them, so
    the help and click's "No such command" see every command as before."""
    import importlib
    import pkgutil

    from . import commands
    names = sorted(info.name for info in pkgutil.iter_modules(commands.__path__)
                   if not info.name.startswith("_"))
    first = next((a for a in argv if not a.startswith("-")), None) if argv else None
    if first in names:
        importlib.import_module(f"{commands.__name__}.{first}")
    if first not in {name or func.__name__.replace("_", "-") for name, func in COMMANDS}:
        for name in names:
            importlib.import_module(f"{commands.__name__}.{name}")
    known = {c.callback for c in app.registered_commands}
    for name, func in COMMANDS:
        if func not in known:
            app.command(name, cls=Command)(func)


_interrupted = False


def _on_sigint(signum, frame):
    """Ctrl-C: remember it (Typer turns the KeyboardInterrupt into a quiet exit 130) and
    interrupt whatever runs; the runner terminates its worker processes on the way out."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _stop_interrupted():
    typer.echo("placelint: interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)


def main():
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        _register_commands(sys.argv[1:])
        app()
    except SystemExit:
        if _interrupted:
            _stop_interrupted()
        raise
    except KeyboardInterrupt:
        _stop_interrupted()
    except Exception as exc:  # noqa: BLE001 - a user never sees a traceback
        typer.echo(f"placelint: internal error: {type(exc).__name__}: {exc} "
                   "(this is a bug in placelint; please report it)", err=True)
        sys.exit(EXIT_ERROR)


#: glibc ``mallopt`` parameters (malloc.h) and the environment variables that set them
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MALLOC_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
               "GLIBC_TUNABLES")


def tune_malloc() -> bool:
    """Have glibc's malloc keep freed memory for the program's life (True when it did).

    By default glibc returns a freed block of 128 KiB-32 MiB (dict and list tables, numpy
    arrays, the parsed model) to the kernel, and the next such allocation faults its pages
    in again: at 10^6 nodes that churn was half the system time of a check (7.3 -> 4.4 s
    of 32 s on a TF1 training graph). A short-lived program that ends at its peak anyway
    loses nothing by keeping it. Not done where the user tunes malloc through the
    environment, nor where the C library is not glibc."""
    if not sys.platform.startswith("linux") or any(v in os.environ for v in _MALLOC_ENV):
        return False
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):   # musl and others: no mallopt
        return False
    return bool(mallopt(_M_TRIM_THRESHOLD, 1 << 30) and mallopt(_M_MMAP_THRESHOLD, 32 << 20))


def run():
    """The ``placelint`` program (the console script, ``python -m placelint``): ``main`` in a
    process that ends with it. The cyclic garbage collector stays off throughout (an
    analysed model holds millions of objects and a few hundred cycles: once a collection
    is due after the analysis, its scans of those objects cost about as much as the
    transfers phase), the last model analysed stays referenced (``runner.keep_last_report``)
    and, once the output is flushed and the atexit handlers have run, the process leaves
    with ``os._exit``, without freeing every object one by one (an ordinary exit under a
    profiler or tracer, whose report is written at exit). OpenBLAS, which numpy loads, gets
    one thread unless the environment says otherwise: placelint makes no BLAS call, and
    starting a thread per core costs a small check a tenth of its time; glibc's malloc keeps
    what is freed (``tune_malloc``). Library callers use ``main`` (or
    ``placelint.analyze``), which leave the interpreter as they found it."""
    from . import runner
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    tune_malloc()
    gc.disable()
    runner.keep_last_report()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):     # sys.exit("message"), as the interpreter does it
        sys.stderr.write(f"{code}\n")
        code = 1
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)      # under a profiler or tracer (cProfile, coverage): its report
    import atexit           # is written on the way out
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe (placelint check | head)
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
