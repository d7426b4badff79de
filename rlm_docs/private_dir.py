"""A directory private to this user, made or checked, for files kept in a shared temp directory.

Every user of a machine can create names in `/tmp`. A directory found there under the name a
process expects (a shipped-store cache, a trajectory scratch directory) may have been planted,
with a symlink or a file inside that the process would then follow or load. So such a directory
is made with mode 0700, and one found already there is used only when it is a real directory
(not a link) owned by this user that no other user may enter.
"""

import contextlib
import os
import stat
from pathlib import Path


class NotPrivate(OSError):
    """The path exists but is not a directory private to this user."""


def private_dir(path: str | os.PathLike) -> Path:
    """`path`, made (mode 0700) if missing; `NotPrivate` unless it is a real directory owned
    by this user with no permissions for group or others."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        target.mkdir(mode=0o700)
    st = os.lstat(target)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise NotPrivate(
            f"{target}: not a directory private to this user (owner uid {st.st_uid}, mode "
            f"{stat.S_IMODE(st.st_mode):o})"
        )
    return target
