"""Check a command line of ``experiments.run`` before any work starts.

Hydra reports a bad override as a stack of exceptions; a researcher needs one line naming the
fix. :func:`check_command_line` composes the config for every combination of a sweep (Hydra's
compose API, the same search path) and returns one line per problem: an unknown key, an unknown
option of a group, a value of the wrong type, an unknown task suite, a missing model or checkpoint.
``experiments.run`` prints them and exits with status 2.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path

from omegaconf import DictConfig

__all__ = ["check_command_line", "check_config", "merge_dict_overrides"]

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
#: launcher options that need the hydra-submitit-launcher plugin (the slurm extra)
_SUBMITIT_LAUNCHERS = ("slurm", "submitit_slurm", "submitit_local")
_MAX_COMBINATIONS = 64  # sweeps larger than this are checked value by value, not as a product
#: env keys whose value must be an integer >= 1 (or null where the default is null)
_POSITIVE_INTS = ("budget", "n_select", "recall_multiplier", "max_parents", "candidates_per_step")


def _sweep_values(overrides: list[str]) -> list[list[str]]:
    """The command line's overrides with every sweep expanded: one list of plain overrides per
    combination (or per value, when the product is too large)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides)
    choices: list[list[str]] = []
    for o in parsed:
        key = o.get_key_element()
        if o.is_sweep_override():
            choices.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            assert o.input_line is not None  # parse_overrides keeps each override's text
            choices.append([o.input_line])
    total = 1
    for c in choices:
        total *= max(1, len(c))
    if total <= _MAX_COMBINATIONS:
        return [list(combo) for combo in itertools.product(*choices)]
    # too many: vary one override at a time around the first value of the others
    base = [c[0] for c in choices]
    out = [base]
    for i, c in enumerate(choices):
        out += [base[:i] + [v] + base[i + 1 :] for v in c[1:]]
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _composition_error(exc: BaseException) -> str:
    """Hydra's composition error as one line naming the fix."""
    cause = exc.__cause__ or exc.__context__
    msg = str(exc) + "\n" + (str(cause) if cause is not None else "")
    key = re.search(r"Could not override '([^']+)'", msg)
    if key and ("not in struct" in msg or "append to your config" in msg):
        name = key.group(1)
        return (
            f"unknown config key {name!r}: check its spelling (python -m experiments.run --cfg job lists "
            f"the keys), or add a new key with +{name}=..."
        )
    group = re.search(r"Could not find '([^']+)'", msg)
    if group:
        avail = re.search(r"Available options in '([^']+)':\s*(.*?)(?:\nConfig search path|$)", msg, re.S)
        opts = ", ".join(avail.group(2).split()) if avail else "see conf/"
        return f"no config {group.group(1)!r}; available: {opts}"
    return _first_line(cause if cause is not None and not str(exc).strip() else exc)


def merge_dict_overrides(argv: list[str]) -> list[str]:
    """``argv`` with every ``key={...}`` whose key holds a mapping in the composed config written
    ``++key={...}``: the dict is merged into the mapping, new keys included.

    Hydra merges a dict override into a mapping but refuses its new keys (the config is in struct
    mode), so ``llm.options.extra_kwargs={top_p:0.9}`` failed with "Key 'top_p' is not in struct";
    free-form mappings (sampling options, backend options, agent kwargs) take any key. A key that
    is not a mapping, or not in the config, is left as it is, for the check to name."""
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    overrides = [a for a in argv if "=" in a and not a.startswith("-")]  # not flags nor their values
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return argv
    dicts = {
        o.input_line
        for o in parsed
        if not (o.is_add() or o.is_force_add() or o.is_delete() or o.is_sweep_override())
        and isinstance(o.value(), dict)
        and o.input_line
    }
    if not dicts:
        return argv
    rest = [o.input_line for o in parsed if o.input_line and o.input_line not in dicts]
    try:
        base = _sweep_values(rest)[0]
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="check"):
            cfg = compose(config_name="config", overrides=base)
    except (HydraException, ValueError, TypeError):
        return argv
    mappings = {line for line in dicts if isinstance(OmegaConf.select(cfg, line.split("=", 1)[0]), DictConfig)}
    return [f"++{a}" if a in mappings else a for a in argv]


def check_config(cfg: DictConfig) -> list[str]:
    """Type and value problems of a composed config, one line each."""
    from kernel_gym.tasks import suite_names

    errors: list[str] = []
    env = cfg.get("env") or {}
    for key in _POSITIVE_INTS:
        v = env.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            errors.append(f"env.{key}={v!r}: must be a positive integer")
    for key in ("task_slots", "pin_rules"):
        v = env.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            errors.append(f"env.{key}={v!r}: must be null or an integer >= 0")
    if env.get("reward_shapes") is not None:
        from kernel_gym.envs.reward_shapes import check_reward_shapes

        try:
            check_reward_shapes(env.get("reward_shapes"))
        except ValueError as exc:
            errors.append(f"env.reward_shapes: {exc}")
    if not isinstance(cfg.get("seed"), int) or isinstance(cfg.get("seed"), bool):
        errors.append(f"seed={cfg.get('seed')!r}: must be an integer")
    tasks = cfg.get("tasks") or {}
    if tasks.get("name") == "kernelbench":
        root = tasks.get("root")
        if not root or not Path(str(root)).is_dir():
            errors.append(
                f"tasks.root={root!r}: not a directory; point it at a KernelBench checkout "
                "(the folder holding level1/, level2/, level3/)"
            )
    elif not tasks.get("ids") and tasks.get("suite") not in suite_names():
        errors.append(
            f"tasks.suite={tasks.get('suite')!r}: unknown suite; use one of {', '.join(suite_names())} "
            "or tasks.ids=[level1/001_add,...]"
        )
    max_tasks = tasks.get("max_tasks")
    if max_tasks is not None and (not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 1):
        errors.append(f"tasks.max_tasks={max_tasks!r}: must be null or a positive integer")
    if tasks.get("ids"):
        from kernel_gym.tasks import get_task

        for task_id in tasks.get("ids") or []:
            try:
                get_task(str(task_id))
            except KeyError as exc:
                errors.append(f"tasks.ids: {exc.args[0]}")
    verifier = cfg.get("verifier") or {}
    if verifier.get("name") == "ray":
        for key in ("num_workers", "num_gpu_workers", "max_retries"):
            v = verifier.get(key)
            if key == "num_gpu_workers" and v is None:
                continue  # one per GPU of the cluster
            low = 1 if key == "num_workers" else 0
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                errors.append(f"verifier.{key}={v!r}: must be an integer >= {low}")
        if importlib.util.find_spec("ray") is None:
            errors.append("verifier=ray needs Ray: pip install 'kernel-gym[ray]' (or use verifier=local)")
    return errors


def check_command_line(argv: list[str]) -> list[str]:
    """Problems of ``python -m experiments.run <argv>``, one line each (empty: it can run).

    Flags other than ``-m``/``--multirun`` (``--cfg``, ``--help``, ...) are Hydra's own business
    and skip the check.
    """
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    from experiments.run import config_problem

    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in argv):
        return []
    overrides = [a for a in argv if a not in ("-m", "--multirun")]
    launcher = next((a.split("=", 1)[1] for a in overrides if a.startswith("hydra/launcher=")), None)
    if launcher in _SUBMITIT_LAUNCHERS and importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None:
        return [
            f"hydra/launcher={launcher} needs Hydra's submitit launcher: pip install 'kernel-gym[slurm]' "
            "(or use hydra/launcher=local, joblib processes on this machine)"
        ]
    try:
        combos = _sweep_values(overrides)
    except HydraException as exc:
        return [f"cannot parse the overrides: {_first_line(exc)}"]
    errors: list[str] = []
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="check"):
        for combo in combos:
            try:
                cfg = compose(config_name="config", overrides=combo)
            except (HydraException, ValueError, TypeError) as exc:
                line = _composition_error(exc)
            else:
                found = check_config(cfg)
                problem = config_problem(cfg)
                if problem:
                    found.append(problem)
                line = "\n".join(found)
            for one in filter(None, line.splitlines()):
                if one not in errors:
                    errors.append(one)
    return errors
