"""Compiling generated C once, with the system's C compiler, and keeping it on disk.

NOTE [ The kernel cache ]
A kernel is a small CPython extension module (one C file: the loops and their METH_FASTCALL
entry points, which take NumPy arrays through the buffer protocol: a call costs about what
a call of a built-in function costs, where ctypes would add microseconds of argument
conversion). Its file name is the SHA-256 of everything that decides the binary: the
source, the compiler command and the compiler's version, and the interpreter's extension
suffix. The directory is ``$EMBER_CACHE_DIR`` when set, else ``$EMBER_HOME/compile``, else
``$XDG_CACHE_HOME/ember/compile``, else ``~/.cache/ember/compile``. The compiler writes to
a temporary file in that directory that is renamed into place only once complete
(``os.replace`` is atomic on POSIX), so a crash mid-write leaves no half-written library
under a cache name, and two processes compiling the same kernel at once both end with the
same complete file. A second process finds the library and loads it without compiling.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

__all__ = ["cache_dir", "load_kernel", "counters", "CompileError", "compiler_flags"]

# how many kernels this process compiled, found on disk, or found already loaded
counters = {"compiled": 0, "disk_hits": 0, "memory_hits": 0}
_loaded: dict = {}

_MODULE_NAME = "@MODULE@"  # replaced by the kernel's module name (it depends on the hash)


class CompileError(RuntimeError):
    """The C compiler failed on a generated kernel (the message has its output)."""


def cache_dir() -> str:
    """Where compiled kernels are kept (NOTE [ The kernel cache ])."""
    explicit = os.environ.get("EMBER_CACHE_DIR")
    if explicit:
        return explicit
    home = os.environ.get("EMBER_HOME")
    if home:
        return os.path.join(home, "compile")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "ember", "compile")


@functools.lru_cache(maxsize=1)
def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise CompileError("ember.compile needs a C compiler (gcc or $CC); none was found")
    return cc


@functools.lru_cache(maxsize=4)
def _openmp_works(cc: str) -> bool:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        r = subprocess.run([cc, "-fopenmp", src, "-o", os.path.join(d, "t")],
                           capture_output=True)
        return r.returncode == 0


@functools.lru_cache(maxsize=4)
def _native_and_mvec(cc: str) -> tuple:
    """(whether ``-march=native`` works, whether glibc's libmvec links)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("#pragma omp declare simd notinbranch\nfloat expf(float);\n"
                    "void k(int n, float* x) {\n#pragma omp simd\n"
                    "for (int i = 0; i < n; i++) x[i] = expf(x[i]); }\n")
        out = os.path.join(d, "t.so")

        def ok(*flags):
            return subprocess.run([cc, "-O3", "-shared", "-fPIC", "-fopenmp-simd", *flags, src,
                                   "-o", out], capture_output=True).returncode == 0

        native = ok("-march=native")
        mvec = ok(*(["-march=native"] if native else []), "-lmvec")
        return native, mvec


@functools.lru_cache(maxsize=1)
def _cpu_name() -> str:
    # -march=native binaries are for this CPU: a cache shared with another machine must
    # not hand them over
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags")):
                    return line
    except OSError:
        pass
    return ""


@functools.lru_cache(maxsize=4)
def _compiler_version(cc: str) -> str:
    r = subprocess.run([cc, "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.stdout else cc


def compiler_flags(openmp: bool = True) -> list:
    """The compiler command's flags (``-fopenmp`` where ``openmp`` and the compiler has it)."""
    cc = _compiler()
    flags = ["-O3", "-shared", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno",
             "-fopenmp-simd", "-I" + sysconfig.get_paths()["include"]]
    native, mvec = _native_and_mvec(cc)
    if native:
        flags.append("-march=native")
    if mvec:
        flags += ["-DEMBER_MVEC", "-lmvec"]
    if openmp and _openmp_works(cc):
        flags.append("-fopenmp")
    return flags


def _key(source: str, flags: list) -> str:
    h = hashlib.sha256()
    for part in (source, " ".join(flags), _compiler_version(_compiler()), _cpu_name(),
                 sysconfig.get_config_var("EXT_SUFFIX") or "", sys.version):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _write_atomically(path: str, data: bytes) -> None:
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _build(source: str, flags: list, so_path: str, c_path: str) -> None:
    _write_atomically(c_path, source.encode())
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(so_path), prefix=".tmp-", suffix=".so")
    os.close(fd)
    try:
        libs = [f for f in flags if f.startswith("-l")]  # after the source, for --as-needed
        opts = [f for f in flags if not f.startswith("-l")]
        r = subprocess.run([_compiler(), *opts, c_path, "-o", tmp, *libs, "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError(f"compiling {c_path} failed:\n{r.stderr[-4000:]}")
        os.replace(tmp, so_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    counters["compiled"] += 1


def load_kernel(source: str, openmp: bool = True):
    """The extension module built from ``source`` (which names its module ``@MODULE@``):
    loaded from this process's table, else from the disk cache, else compiled. Returns
    ``(module, path of the .so)``."""
    flags = compiler_flags(openmp)
    key = _key(source, flags)
    hit = _loaded.get(key)
    if hit is not None:
        counters["memory_hits"] += 1
        return hit
    name = "ember_kernel_" + key[:24]
    d = cache_dir()
    os.makedirs(d, exist_ok=True)
    so_path = os.path.join(d, name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    if os.path.exists(so_path):
        counters["disk_hits"] += 1
    else:
        _build(source.replace(_MODULE_NAME, name), flags, so_path,
               os.path.join(d, name + ".c"))
    loader = importlib.machinery.ExtensionFileLoader(name, so_path)
    spec = importlib.util.spec_from_file_location(name, so_path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _loaded[key] = (module, so_path)
    return module, so_path


def clear_loaded() -> None:
    """Forget the kernels loaded in this process (the disk cache stays)."""
    _loaded.clear()
