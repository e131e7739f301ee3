"""What the user sees when a ``rosetta`` command cannot do its work: one line naming the file
(or batch, document) and the reason, never a traceback unless ``-v`` asks for it.

Exit status 2: the input was rejected (a ``DocumentError``: corrupt, empty, no text, a
language not configured...); 1: the command failed (anything else); 130: the run was
interrupted (SIGTERM, Ctrl-C) and the next run resumes it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import traceback
from typing import Callable

from pipeline.contracts import DocumentError

REJECTED, FAILED, INTERRUPTED = 2, 1, 130


class Interrupted(Exception):
    """A run stopped by a signal (pipeline.cli.dag_runs); the next run resumes it."""

    def __init__(self, signum: int):
        self.signal = signal.Signals(signum).name
        super().__init__(f"interrupted by {self.signal}")


def subject(args: argparse.Namespace) -> str:
    """What the command was working on, as the user named it."""
    for name in ("file", "document", "batch_id", "batch"):
        if getattr(args, name, None):
            return str(getattr(args, name))
    paths = getattr(args, "paths", None)
    return ", ".join(paths) if paths else ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def run_reporting_errors(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a sub-command; turn its exception into one line on stderr and an exit status."""
    try:
        return command(args)
    except (Interrupted, KeyboardInterrupt) as error:
        name = error.signal if isinstance(error, Interrupted) else "SIGINT"
        print(f"rosetta {args.command}: interrupted ({name}); the run stopped, and running the same command "
              f"again resumes it", file=sys.stderr)
        return INTERRUPTED
    except DocumentError as error:
        code, message, caught = REJECTED, f"rejected ({error.reason}): {_flat(error.detail) or error.reason}", error
    except Exception as error:
        code, message, caught = FAILED, f"failed: {type(error).__name__}: {_flat(str(error))}", error
    if args.verbose:
        traceback.print_exception(caught)
    where = subject(args)
    hint = "" if args.verbose else " (-v shows the traceback)" if code == FAILED else ""
    print(f"rosetta {args.command}: {where + ': ' if where else ''}{message}{hint}", file=sys.stderr)
    return code
