"""Where the `zamburak` binary is: the one the wheel installed beside this package's interpreter, the one
`ZAMBURAK_BINARY` names (a development build), or the first on `PATH`."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

from ._errors import ZamburakError


def find_binary() -> str:
    """The path of the `zamburak` binary this package runs.

    `ZAMBURAK_BINARY` wins (a path to a build of your own); then the scripts directory of this interpreter's
    installation scheme, where `pip install` put the wheel's binary; then the user scheme's; then `PATH`.
    """
    explicit = os.environ.get("ZAMBURAK_BINARY")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return os.path.abspath(explicit)
        raise ZamburakError(f"ZAMBURAK_BINARY names {explicit}, which is not an executable file", 2)
    name = "zamburak.exe" if sys.platform == "win32" else "zamburak"
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user" if os.name != "posix" or sys.platform != "darwin" else "osx_framework_user"
    try:
        candidates.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:  # an interpreter without a user scheme
        pass
    for directory in candidates:
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise ZamburakError(
        "the zamburak binary is not installed beside this package (reinstall it with `pip install zamburak`), "
        "and none is on PATH; or name one with ZAMBURAK_BINARY",
        2,
    )
