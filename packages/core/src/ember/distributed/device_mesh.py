"""DeviceMesh: the ranks of the job laid out as an n-dimensional array, with one process
group per line of the array along each dimension (torch.distributed.device_mesh).

A 2 x 4 mesh of 8 ranks ``[[0, 1, 2, 3], [4, 5, 6, 7]]`` has, along dimension 0, the groups
``{0, 4}, {1, 5}, {2, 6}, {3, 7}`` and along dimension 1 the groups ``{0, 1, 2, 3}`` and
``{4, 5, 6, 7}``; ``get_group(d)`` is this rank's group along ``d``. Every rank of the
default group builds the mesh (the groups are split off the world). CPU meshes only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """A layout of ranks as an n-dimensional array, with its process groups.

    Args:
        device_type (str): ``"cpu"`` (CUDA meshes need the NCCL backend).
        mesh (Tensor or array-like): the global ranks, one entry per rank of the default
            group.
        mesh_dim_names (tuple[str, ...], optional): a name for each dimension.
        backend_override: per-dimension backends; ember's groups all run on MPI, so only
            None (or entries of None) are accepted.
        _init_backend (bool): create the process groups (default True).
        _rank (int, optional): this process's global rank (default: the default group's).
        _layout, _rank_map, _root_mesh: PyTorch's internal arguments; must be None.

    Example::

        >>> mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        >>> dist.all_reduce(t, group=mesh.get_group("dp"))
    """

    def __init__(self, device_type: str, mesh=None, *, mesh_dim_names=None,
                 backend_override=None, _init_backend: bool = True, _rank=None,
                 _layout=None, _rank_map=None, _root_mesh=None) -> None:
        from ember.distributed.distributed_c10d import get_rank, get_world_size

        if device_type != "cpu":
            raise RuntimeError(f"DeviceMesh of device type {device_type!r}: ember's process "
                               "groups run on MPI with CPU tensors; use 'cpu'")
        if mesh is None:
            raise ValueError("DeviceMesh needs the mesh of ranks")
        if _layout is not None or _rank_map is not None or _root_mesh is not None:
            raise ValueError("_layout, _rank_map and _root_mesh are PyTorch internals that "
                             "ember's DeviceMesh does not take")
        if backend_override is not None and any(b not in (None, (None, None))
                                                for b in backend_override):
            raise ValueError("backend_override: ember's groups all run on MPI")
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if ranks.ndim == 0:
            raise ValueError("the mesh must have at least one dimension")
        world = get_world_size()
        if sorted(ranks.reshape(-1).tolist()) != list(range(world)):
            raise ValueError(f"the mesh must hold every rank of the default group (0 to "
                             f"{world - 1}) once, got {ranks.tolist()}")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim:
                raise RuntimeError(f"mesh_dim_names {mesh_dim_names} must have one name per "
                                   f"dimension of the mesh ({ranks.ndim})")
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(f"mesh_dim_names {mesh_dim_names} must be unique")
        self.device_type = device_type
        self._ranks = ranks
        self.mesh_dim_names = mesh_dim_names
        self._rank = get_rank() if _rank is None else int(_rank)
        where = np.argwhere(ranks == self._rank)
        self._coordinate = tuple(int(i) for i in where[0]) if len(where) else None
        self._groups: list = []
        if _init_backend:
            self._groups = [self._make_groups(d) for d in range(ranks.ndim)]

    def _make_groups(self, dim: int):
        from ember.distributed.distributed_c10d import new_subgroups_by_enumeration

        lines = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim])
        mine, _ = new_subgroups_by_enumeration([line.tolist() for line in lines])
        return mine

    # -- what PyTorch's DeviceMesh answers ---------------------------------------------
    @property
    def mesh(self):
        """The ranks, as an int64 tensor."""
        import ember

        return ember.tensor(self._ranks.tolist(), dtype=ember.int64)

    @property
    def ndim(self) -> int:
        return int(self._ranks.ndim)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self._ranks.shape)

    def _dim(self, mesh_dim) -> int:
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions; name "
                                   "the dimension (mesh_dim)")
            return 0
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a mesh of "
                             f"{self.ndim} dimensions")
        return mesh_dim % self.ndim

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        if mesh_dim is None:
            return int(self._ranks.size)
        return int(self._ranks.shape[self._dim(mesh_dim)])

    def get_group(self, mesh_dim=None):
        """This rank's process group along ``mesh_dim`` (an index or a name; may be left
        out for a 1-D mesh)."""
        if not self._groups:
            raise RuntimeError("this DeviceMesh was made with _init_backend=False: it has no "
                               "process groups")
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self) -> list:
        """This rank's process group along each dimension."""
        return [self.get_group(d) for d in range(self.ndim)]

    def get_rank(self) -> int:
        """This process's global rank."""
        return self._rank

    def get_local_rank(self, mesh_dim=None) -> int:
        """This rank's index along ``mesh_dim`` (its rank in that dimension's group)."""
        from ember.distributed.distributed_c10d import get_rank

        if self._coordinate is None:
            raise RuntimeError("this rank is not in the mesh")
        if self._groups:
            return get_rank(self.get_group(mesh_dim))
        return self._coordinate[self._dim(mesh_dim)]

    def get_coordinate(self) -> tuple[int, ...] | None:
        """This rank's position in the mesh, or None if it is not in it."""
        return self._coordinate

    @staticmethod
    def from_group(group, device_type: str, mesh=None, *, mesh_dim_names=None) -> DeviceMesh:
        """A 1-D mesh of the ranks of ``group`` (the default group: every rank)."""
        from ember.distributed.distributed_c10d import get_process_group_ranks

        if isinstance(group, list):
            raise ValueError("ember's DeviceMesh.from_group takes one group (a 1-D mesh)")
        ranks = get_process_group_ranks(group) if mesh is None else mesh
        return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._ranks.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *, mesh_dim_names=None,
                     backend_override=None) -> DeviceMesh:
    """A DeviceMesh of shape ``mesh_shape`` over the ranks 0, 1, ... in row-major order.
    Every rank of the default group calls it.

    Args:
        device_type (str): ``"cpu"``.
        mesh_shape (tuple[int, ...]): the mesh's shape; its product is the world size.
        mesh_dim_names (tuple[str, ...], optional): a name for each dimension.
        backend_override: must be None (ember's groups run on MPI).
    """
    from ember.distributed.distributed_c10d import get_world_size

    shape = tuple(int(s) for s in mesh_shape)
    world = get_world_size()
    if int(np.prod(shape)) != world:
        raise RuntimeError(f"mesh_shape {shape} has {int(np.prod(shape))} entries, but the "
                           f"world has {world} ranks")
    if backend_override:
        raise ValueError("backend_override: ember's groups all run on MPI")
    return DeviceMesh(device_type, np.arange(world).reshape(shape),
                      mesh_dim_names=mesh_dim_names)
