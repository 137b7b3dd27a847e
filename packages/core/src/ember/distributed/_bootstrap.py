"""What each rank runs first: ``python -m ember.distributed._bootstrap [options] script args``.

It sets torchrun's environment variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, ROLE_RANK, ...) from the variables the MPI launcher gives each process (Open
MPI's OMPI_COMM_WORLD_*, Slurm's SLURM_*, MPICH's PMI_*), then runs the script as
``__main__`` (or a module with ``-m``, or a program with ``--no-python``). It does not start
MPI: the script's ``init_process_group`` does.
"""

from __future__ import annotations

import os
import runpy
import sys

__all__: list[str] = []

# (rank, world size, local rank, local world size) variables of each launcher
_LAUNCHERS = [
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"),
]


def rank_environment(environ=os.environ) -> dict[str, str]:
    """torchrun's per-rank variables, computed from the MPI launcher's."""
    for rank_var, size_var, local_var, local_size_var in _LAUNCHERS:
        if rank_var in environ and size_var in environ:
            rank, size = int(environ[rank_var]), int(environ[size_var])
            local = int(environ.get(local_var, rank))
            # SLURM_NTASKS_PER_NODE may read "2(x3)"
            local_size = int(str(environ.get(local_size_var, size)).split("(")[0])
            break
    else:
        rank, size, local, local_size = 0, 1, 0, 1
    node = rank // local_size if local_size else 0
    nnodes = max(1, size // local_size) if local_size else 1
    return {"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": str(local),
            "LOCAL_WORLD_SIZE": str(local_size), "GROUP_RANK": str(node),
            "GROUP_WORLD_SIZE": str(nnodes), "ROLE_RANK": str(rank),
            "ROLE_WORLD_SIZE": str(size), "ROLE_NAME": environ.get("ROLE_NAME", "default")}


def main(argv=None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    module = no_python = local_rank_arg = False
    while args and args[0].startswith("--ember-"):
        flag = args.pop(0)
        module |= flag == "--ember-module"
        no_python |= flag == "--ember-no-python"
        local_rank_arg |= flag == "--ember-local-rank-arg"
    if not args:
        sys.exit("ember.distributed._bootstrap: no script given")
    env = rank_environment()
    os.environ.update(env)
    target, rest = args[0], args[1:]
    if local_rank_arg:   # torch.distributed.launch without --use-env
        rest = [f"--local-rank={env['LOCAL_RANK']}", *rest]
    if no_python:
        os.execvp(target, [target, *rest])
    sys.argv = [target, *rest]
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        # sys.exit(non-zero) while other ranks may wait for this one: tell them
        if e.code not in (None, 0) and "ember.distributed._mpi" in sys.modules:
            sys.modules["ember.distributed._mpi"].report_exit(e.code)
        raise


if __name__ == "__main__":
    main()
