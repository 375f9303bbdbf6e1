"""Run ``check`` over many models: the cache first, then the misses in a process pool.

Each model's outcome is a ``ModelResult``: plain data (picklable for the pool, JSON for the
cache) holding what the output formats need. Results come back in the order of the
models, whatever order the workers finish in.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

from .checks.pl009_internal_error import InternalError
from .diagnostics import Diagnostic, Severity
from .location import SourceLocation


@dataclass
class ModelResult:
    path: str                                   #: the model as the user named it
    format: str | None = None                   #: e.g. "GraphDef (text)"; None if unreadable
    entry: str | None = None                    #: what part of the model was analysed
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cached: bool = False                        #: served from the cache
    #: per device pair: the cross-device transfers (``analyses.transfers.PairSummary.to_dict``)
    transfer_pairs: list[dict] | None = None
    #: with a memory budget (``--memory``): full device name -> its memory and budget
    #: (``analyses.memory_budget.device_objects``); None when memory was not analysed
    memory: dict[str, dict] | None = None
    #: why the file is no model at all (``ModelReport.not_a_model``), else None
    not_a_model: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "format": self.format, "entry": self.entry,
                "diagnostics": [diag_to_dict(d) for d in self.diagnostics],
                "transfer_pairs": self.transfer_pairs, "memory": self.memory,
                "not_a_model": self.not_a_model}

    @classmethod
    def from_dict(cls, data: dict, cached: bool = False) -> "ModelResult":
        return cls(data["path"], data["format"], data["entry"],
                   [diag_from_dict(d) for d in data["diagnostics"]], cached=cached,
                   transfer_pairs=data.get("transfer_pairs"),
                   memory=data.get("memory"),
                   not_a_model=data.get("not_a_model"))

    @classmethod
    def from_report(cls, report) -> "ModelResult":
        model = report.model
        return cls(report.path, model.format if model else None, report.entry,
                   list(report.diagnostics), transfer_pairs=_transfer_pairs(report),
                   memory=_memory(report), not_a_model=report.not_a_model)


def _transfer_pairs(report) -> list[dict] | None:
    """The per-device-pair transfer summary, or None when the model was not placed (load
    failure, or a placement TF refuses: its transfers are not meaningful)."""
    ctx = report.context
    if ctx is None:
        return None
    try:
        if ctx.placement.errors:
            return None
        from .analyses.transfers import summarize
        return [p.to_dict() for p in summarize(ctx.transfers)]
    except Exception:  # noqa: BLE001 - the rules already reported an internal error
        return None


def _memory(report) -> dict[str, dict] | None:
    """Every device's memory, only when a budget is set (``--memory``): the analysis costs
    about 40% of ``check``'s time on a 10^5-node graph, and ``placelint memory`` gives the
    table without a budget."""
    ctx = report.context
    if ctx is None or not ctx.settings.memory:
        return None
    from .analyses.memory_budget import analysed_device_objects
    try:
        return analysed_device_objects(ctx)
    except Exception:  # noqa: BLE001 - the rules already reported an internal error
        return None


def diag_to_dict(d: Diagnostic) -> dict:
    """Every field of a Diagnostic (``to_json`` is the public subset)."""
    loc = d.location
    return {"code": d.code, "rule": d.rule, "severity": d.severity.value, "message": d.message,
            "node": d.node, "related_nodes": list(d.related_nodes),
            "location": None if loc is None else [loc.file, loc.line, loc.function, loc.column],
            "model": d.model, "file": d.file, "file_line": d.file_line,
            "fix": d.fix, "detail": d.detail, "nodes": list(d.nodes),
            "phase": d.phase}


def diag_from_dict(data: dict) -> Diagnostic:
    loc = data["location"]
    return Diagnostic(code=data["code"], rule=data["rule"], severity=Severity(data["severity"]),
                      message=data["message"], node=data["node"],
                      related_nodes=list(data["related_nodes"]),
                      location=None if loc is None else SourceLocation(*loc),
                      model=data["model"], file=data["file"], file_line=data["file_line"],
                      fix=data["fix"], detail=data["detail"], nodes=list(data["nodes"]),
                      phase=data.get("phase"))


#: in a worker process: the queue its phases go to (set by ``_init_worker``)
_PHASES = None


def _init_worker(phases) -> None:
    """A worker leaves Ctrl-C to the parent, which terminates it (SIGINT reaches the whole
    foreground process group: without this every worker would print a traceback)."""
    global _PHASES
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PHASES = phases


#: the report of the last model analysed, when ``keep_last_report`` asked for it
_kept: list | None = None


def keep_last_report() -> None:
    """Keep the report of the last model this process analysed referenced, for a process
    that exits without freeing it (``cli.run``). Each report is dropped before the next
    model is analysed: at most one is held."""
    global _kept
    _kept = []


def analyze_one(ref, settings, on_phase=None) -> ModelResult:
    """One model through the pipeline; ``on_phase(phase)`` hears each phase."""
    from .pipeline import analyze
    if _kept:
        _kept.clear()
    report = analyze(ref, settings) if on_phase is None else analyze(ref, settings,
                                                                     on_phase=on_phase)
    if _kept is not None:
        _kept.append(report)
    return ModelResult.from_report(report)


def _analyze_in_worker(ref, settings, index: int) -> ModelResult:
    """``analyze_one`` in a worker process, its phases sent to the parent's queue."""
    if _PHASES is None:
        return analyze_one(ref, settings)
    put = _PHASES.put
    return analyze_one(ref, settings, lambda phase: put((index, phase)))


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def _failed(ref, where: str, exc: BaseException) -> ModelResult:
    from .pipeline import internal_error
    d = internal_error(where, exc)
    d.model, d.file = ref.display, str(ref.path)
    return ModelResult(ref.display, diagnostics=[d])


def run_models(refs, settings, *, jobs: int = 1, cache=None,
               progress=None) -> list[ModelResult]:
    """Analyse ``refs``; ``jobs`` worker processes (0 = one per core); ``cache`` a
    ``placelint.cache.Cache`` or None. Results with an internal error are not cached.
    ``progress``: a ``commands._progress.Progress`` (or None) told of each model and phase.

    Ctrl-C (KeyboardInterrupt) stops the run at once: the worker processes are
    terminated, not waited for, and the interrupt goes on to the caller."""
    results: list[ModelResult | None] = [None] * len(refs)
    keys: list[str | None] = [None] * len(refs)
    todo: list[int] = []
    if cache is not None:
        from .cache import settings_fingerprint
        fp = settings_fingerprint(settings)
    for i, ref in enumerate(refs):
        if cache is not None:
            keys[i] = cache.key(ref, settings, fp)
            hit = cache.get(keys[i])
            if hit is not None:
                try:
                    results[i] = ModelResult.from_dict(hit, cached=True)
                    continue
                except (KeyError, TypeError, ValueError):   # a damaged entry: analyse again
                    pass
        todo.append(i)

    if progress is not None:
        progress.start(len(refs), done=len(refs) - len(todo))
    try:
        workers = min(jobs or default_jobs(), len(todo))
        if workers > 1:
            _run_pool(refs, settings, todo, results, workers, progress)
        else:
            for i in todo:
                if progress is not None:
                    progress.model_started(i, refs[i].display)
                if progress is None:
                    results[i] = analyze_one(refs[i], settings)
                else:
                    results[i] = analyze_one(refs[i], settings,
                                             lambda phase, i=i: progress.phase(i, phase))
                if progress is not None:
                    progress.model_done(i)
    finally:
        if progress is not None:
            progress.stop()

    if cache is not None:
        for i in todo:
            r = results[i]
            if not any(d.code == InternalError.code for d in r.diagnostics):
                cache.put(keys[i], r.to_dict())
    return results  # type: ignore[return-value]


#: how often the parent wakes up while workers run (Ctrl-C and progress are seen this fast)
POLL_SECONDS = 0.1


def _run_pool(refs, settings, todo, results, workers, progress) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    phases = multiprocessing.SimpleQueue() if progress is not None else None
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                               initargs=(phases,))
    try:
        futures = {pool.submit(_analyze_in_worker, refs[i], settings, i): i for i in todo}
        pending = set(futures)
        started = set()
        while pending:
            done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            if progress is not None:
                while not phases.empty():
                    i, phase = phases.get()
                    if i not in started:
                        started.add(i)
                        progress.model_started(i, refs[i].display)
                    progress.phase(i, phase)
            for fut in done:
                i = futures[fut]
                try:
                    results[i] = fut.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker (e.g. out of memory)
                    results[i] = _failed(refs[i], "a worker process", exc)
                if progress is not None:
                    progress.model_done(i)
    except BaseException:
        # Ctrl-C (or anything else): do not wait for the running models
        _terminate(pool)
        raise
    pool.shutdown(wait=True)


def _terminate(pool) -> None:
    """Stop ``pool`` now: cancel what has not started and terminate the workers.

    ``ProcessPoolExecutor`` has no public way to stop running tasks before Python 3.14
    (``terminate_workers``); its ``_processes`` map (pid -> Process) is read defensively."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        try:
            proc.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    for proc in processes:
        try:
            proc.join(timeout=1.0)
            if proc.is_alive():
                proc.kill()
        except (OSError, ValueError, AttributeError, AssertionError):
            pass
