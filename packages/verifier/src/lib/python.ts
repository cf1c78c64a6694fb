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
