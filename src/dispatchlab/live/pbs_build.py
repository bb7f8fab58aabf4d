"""Build OpenPBS from its source tarball once, into a cache folder outside the checkout.

OpenPBS (PBS Professional's open-source line) has no Debian package: the live PBS tests and
``tools/pbs-local`` use a build of the tarball kept in ``/var/cache/dispatchlab-pbs/VERSION``
(or ``$DISPATCHLAB_PBS_CACHE``). A finished build leaves ``installed`` beside the install
prefix; a failed one leaves ``unavailable.txt`` with the reason, which the tests quote when
they skip. Only the standard library is used (CI runs this before installing anything else).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

#: The OpenPBS version and commit the project builds and tests against.
VERSION = "23.06.06-cd7ab5e"
TARBALL_NAME = f"openpbs-{VERSION}.tar.gz"

#: Debian packages the build needs (INSTALL's postgresql-server-dev-all is not needed).
DEBIAN_PACKAGES = (
    "build-essential", "autoconf", "automake", "libtool", "libltdl-dev", "pkg-config",
    "libhwloc-dev", "libx11-dev", "libxt-dev", "libxext-dev", "libxft-dev", "libedit-dev",
    "libical-dev", "libncurses-dev", "libpq-dev", "postgresql", "postgresql-contrib",
    "python3-dev", "tcl-dev", "tk-dev", "swig", "libexpat1-dev", "expat", "libssl-dev",
    "libcjson-dev", "zlib1g-dev",
)

#: PATH for the build and the daemons: Debian's own python3 (hooks run on it), no venv.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class PbsBuildError(RuntimeError):
    """OpenPBS could not be built here (the message says which step failed and where its log is)."""


def cache_dir() -> Path:
    """This version's build folder (in ``$DISPATCHLAB_PBS_CACHE`` or /var/cache/dispatchlab-pbs)."""
    base = Path(os.environ.get("DISPATCHLAB_PBS_CACHE", "/var/cache/dispatchlab-pbs"))
    return base / VERSION


def prefix(cache: Path | None = None) -> Path:
    """The install prefix (``PBS_EXEC``) of the cached build."""
    return (cache or cache_dir()) / "install"


def is_built(cache: Path | None = None) -> bool:
    """Whether a finished build is in the cache."""
    cache = cache or cache_dir()
    return (cache / "installed").is_file() and (prefix(cache) / "sbin" / "pbs_server.bin").is_file()


def unavailable_reason(cache: Path | None = None) -> str | None:
    """Why there is no build (None when there is one)."""
    cache = cache or cache_dir()
    if is_built(cache):
        return None
    note = cache / "unavailable.txt"
    if note.is_file():
        return note.read_text().strip()
    return f"no OpenPBS build in {cache} (run tools/pbs-local build, or .ci/setup-pbs.sh)"


def find_tarball(explicit: Path | None = None) -> Path | None:
    """The source tarball: ``explicit``, ``$DISPATCHLAB_PBS_TARBALL`` or ../shared/vendor."""
    candidates = [explicit] if explicit else []
    if os.environ.get("DISPATCHLAB_PBS_TARBALL"):
        candidates.append(Path(os.environ["DISPATCHLAB_PBS_TARBALL"]))
    checkout = Path(__file__).resolve().parents[3]
    candidates += [checkout.parent / "shared" / "vendor" / TARBALL_NAME,
                   Path("/work/shared/vendor") / TARBALL_NAME]
    return next((c for c in candidates if c is not None and c.is_file()), None)


def build(tarball: Path | None = None, jobs: int = 2, log: Callable[[str], None] = print) -> Path:
    """Build and install OpenPBS into the cache unless it is there; the install prefix.

    Raises :class:`PbsBuildError` (and writes its message to ``unavailable.txt``) on failure.
    """
    cache = cache_dir()
    if is_built(cache):
        return prefix(cache)
    try:
        return _build(cache, tarball, jobs, log)
    except (PbsBuildError, OSError, tarfile.TarError) as err:
        cache.mkdir(parents=True, exist_ok=True)
        why = " ".join(str(err).split())  # one line: the skip reason quotes it
        (cache / "unavailable.txt").write_text(f"OpenPBS build failed: {why}\n")
        if isinstance(err, PbsBuildError):
            raise
        raise PbsBuildError(why) from err


def _build(cache: Path, tarball: Path | None, jobs: int, log: Callable[[str], None]) -> Path:
    source = find_tarball(tarball)
    if source is None:
        raise PbsBuildError(f"source tarball {TARBALL_NAME} not found "
                            "(set DISPATCHLAB_PBS_TARBALL)")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "unavailable.txt").unlink(missing_ok=True)
    work = cache / "src"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    with tarfile.open(source) as tar:
        tar.extractall(work, filter="data")
    tops = [p for p in work.iterdir() if p.is_dir()]
    tree = tops[0] if len(tops) == 1 and not (work / "configure.ac").exists() else work
    pfx = prefix(cache)
    shutil.rmtree(pfx, ignore_errors=True)
    env = dict(os.environ, PATH=SYSTEM_PATH)
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    steps = [
        ("autogen", ["./autogen.sh"]),
        ("configure", ["./configure", f"--prefix={pfx}", f"--with-pbs-conf-file={cache}/pbs.conf",
                       f"--with-pbs-server-home={cache}/home", "--with-python=/usr",
                       "--disable-security"]),
        ("make", ["make", f"-j{jobs}"]),
        ("install", ["make", "install", f"sysprofiledir={pfx}/etc/profile.d",
                     f"unitfiledir={pfx}/lib/systemd"]),
    ]
    for name, command in steps:
        started = time.monotonic()
        log_path = cache / f"build-{name}.log"
        with open(log_path, "w") as out:
            done = subprocess.run(command, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise PbsBuildError(f"step {name} exited {done.returncode} ({tail[0][:200]}); "
                                f"log {log_path}")
        log(f"pbs build: {name} done in {time.monotonic() - started:.0f} s")
    for setuid in ("pbs_iff", "pbs_rcp"):  # make install drops the setuid bit
        path = pfx / "sbin" / setuid
        if path.exists():
            path.chmod(0o4755)
    shutil.rmtree(work, ignore_errors=True)
    (cache / "installed").write_text(f"{VERSION} from {source}\n")
    return pfx
