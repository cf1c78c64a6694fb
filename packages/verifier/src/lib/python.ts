// Text that code under test controls must not carry hidden material to a model. A solution running in a
// container that holds material (a test suite's files, a case's inputs) could name an exception class
// after what it read; so a hidden check shows an exception's type only when it is one of Python's own.

const BUILTIN_NAMES = `ArithmeticError AssertionError AttributeError BaseException BlockingIOError BrokenPipeError BufferError
ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError EOFError
Exception FileExistsError FileNotFoundError FloatingPointError GeneratorExit ImportError IndentationError
IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError
ModuleNotFoundError NameError NotADirectoryError NotImplementedError OSError OverflowError PermissionError
ProcessLookupError RecursionError ReferenceError RuntimeError StopIteration SyntaxError SystemError SystemExit
TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError ValueError
ZeroDivisionError Failed`;
// Stryker disable next-line Regex: equivalent; the names are separated by single spaces and newlines, so a run of whitespace is one character
const BUILTIN_EXCEPTIONS = new Set(BUILTIN_NAMES.split(/\s+/));

/** Python's name for a built-in exception type, or a neutral word for anything else. */
export function safeExceptionName(name: string | undefined): string {
  // String(undefined) is "undefined", no exception's name; the part after the last dot is the class's own.
  const text = String(name);
  const short = text.slice(text.lastIndexOf(".") + 1);
  return BUILTIN_EXCEPTIONS.has(short) ? short : "an exception";
}

/**
 * Top-level names that would replace pytest or a module it imports when they sit on sys.path before the
 * installed ones (`python3 -m pytest` puts the working directory first; PYTHONPATH comes before the
 * install), plus sitecustomize/usercustomize, which Python itself imports at start-up.
 */
export const PYTEST_SHADOWS = ["pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli"];
export const STARTUP_MODULES = ["sitecustomize", "usercustomize"];

/**
 * issue 25: top-level names a `cases` program cannot take. The harness imports the program by name after
 * its own imports, and a pool container's interpreter has already imported numpy and pandas (and what
 * they import): a name already in sys.modules is that module, so importlib hands back the library and the
 * program never runs (module "json" with function "loads" would be judged on json.loads). A name the
 * program or those libraries import later (dateutil, os) would make them import the program instead.
 *
 * Produced in the sandbox image (Python 3.11.2; tag from `npx tsx packages/sandbox/src/image-cli.ts tag`)
 * with
 *   docker run --rm --network none loopsmith/sandbox-python:8ec544a203a6 python3 -c 'import sys;
 *     import numpy, pandas; print(" ".join(sorted(set(sys.stdlib_module_names) | {m.partition(".")[0] for m in sys.modules})))'
 * that is, the standard library's module names (sys.stdlib_module_names, which lists every platform's,
 * msvcrt and winreg too) and every top-level module loaded once numpy and pandas are imported. The
 * harness's own imports (importlib, json, math, os, resource, select, signal, subprocess, sys, time,
 * traceback) are standard library; a test holds the list to them. STARTUP_MODULES are added below.
 */
const PYTHON_MODULE_NAMES = `
__future__ __main__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs _codecs_cn
_codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections _collections_abc _compat_pickle
_compression _contextvars _crypt _csv _ctypes _curses _curses_panel _cython_0_29_32 _datetime _dbm _decimal
_elementtree _frozen_importlib _frozen_importlib_external _functools _gdbm _hashlib _heapq _imp _io _json
_locale _lsprof _lzma _markupbase _md5 _msi _multibytecodec _multiprocessing _opcode _operator _osx_support
_overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydecimal _pyio _queue _random _scproxy _sha1 _sha256
_sha3 _sha512 _signal _sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string _strptime _struct
_symtable _sysconfigdata__x86_64-linux-gnu _thread _threading_local _tkinter _tokenize _tracemalloc _typing
_uuid _warnings _weakref _weakrefset _winapi _zoneinfo abc aifc antigravity argparse array ast asynchat asyncio
asyncore atexit audioop base64 bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd
code codecs codeop collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg
crypt csv ctypes curses cython_runtime dataclasses datetime dateutil dbm decimal difflib dis distutils doctest
email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc
genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr
imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox mailcap
marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path
numbers numpy opcode operator optparse os ossaudiodev pandas pathlib pdb pickle pickletools pipes pkgutil
platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data
pyexpat pytz queue quopri random re readline reprlib resource rlcompleter runpy sched secrets select selectors
shelve shlex shutil signal site sitecustomize six smtpd smtplib sndhdr socket socketserver spwd sqlite3
sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys
sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter token
tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu
uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport
zlib zoneinfo
`;
// Stryker disable next-line Regex: equivalent; the names are separated by single spaces and newlines
export const CASES_MODULE_SHADOWS: ReadonlySet<string> = new Set([...PYTHON_MODULE_NAMES.trim().split(/\s+/), ...STARTUP_MODULES]);
