// issue 26: test_suite's process boundary. The client's tests run in the judge's process (its own uid, its own
// files); the program runs in another, and the two exchange only plain data over pipes. These are the Python
// sources placed in the sandbox; tests/e2e/checks/test-suite-bridge.test.ts runs them for real.

/** The wire codec, on both sides of test_suite's process boundary (see the file's own comment). */
export const BRIDGE_WIRE_PY = String.raw`# The wire between a judge and the program it judges (test_suite's process boundary): plain data, one
# JSON document per line. Values keep their exact Python types (a tuple is not a list, a set is not a
# sorted list, dict keys need not be strings); anything that is not plain data crosses as a handle, a
# number the program's side resolves. Nothing here ever builds an object of a type the sender names: the
# judge decodes what the program sends into built-in values and its own proxies only.
import base64, datetime, decimal, fractions, json, math, sys

MAX_DEPTH = 100
TAGS = ("$float", "$tuple", "$set", "$frozenset", "$dict", "$bytes", "$bytearray", "$complex", "$decimal", "$fraction",
        "$datetime", "$date", "$time", "$timedelta", "$range", "$ndarray", "$npscalar", "$namedtuple", "$enum", "$path", "$handle", "$live")


class Unsendable(TypeError):
    pass


def encode(v, other, depth=0):
    """other(v, depth) encodes what is not plain data (a handle), or raises Unsendable."""
    if depth > MAX_DEPTH:
        raise Unsendable("the value nests deeper than %d levels" % MAX_DEPTH)
    if v is None or v is True or v is False:
        return v
    t = type(v)
    d = depth + 1
    if t is int or t is str:
        return v
    if t is float:
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if t is list:
        return [encode(x, other, d) for x in v]
    if t is tuple:
        return {"$tuple": [encode(x, other, d) for x in v]}
    if t is dict:
        return {"$dict": [[encode(k, other, d), encode(x, other, d)] for k, x in v.items()]}
    if t is set:
        return {"$set": [encode(x, other, d) for x in v]}
    if t is frozenset:
        return {"$frozenset": [encode(x, other, d) for x in v]}
    if t is bytes:
        return {"$bytes": base64.b64encode(v).decode()}
    if t is bytearray:
        return {"$bytearray": base64.b64encode(bytes(v)).decode()}
    if t is complex:
        return {"$complex": [encode(v.real, other, d), encode(v.imag, other, d)]}
    if t is decimal.Decimal:
        return {"$decimal": str(v)}
    if t is fractions.Fraction:
        return {"$fraction": [v.numerator, v.denominator]}
    if t is datetime.datetime:
        return {"$datetime": v.isoformat()}
    if t is datetime.date:
        return {"$date": v.isoformat()}
    if t is datetime.time:
        return {"$time": v.isoformat()}
    if t is datetime.timedelta:
        return {"$timedelta": [v.days, v.seconds, v.microseconds]}
    if t is range:
        return {"$range": [v.start, v.stop, v.step]}
    # A filesystem path (pytest's tmp_path) crosses as one: the other side gets a pathlib.Path of the same text.
    pathlib = sys.modules.get("pathlib")
    if pathlib is not None and isinstance(v, pathlib.PurePath):
        return {"$path": str(v)}
    enum = sys.modules.get("enum")
    if enum is not None and isinstance(v, enum.Enum):
        return {"$enum": {"type": str(t.__name__), "name": str(v.name), "value": encode(v.value, other, d)}}
    if isinstance(v, tuple) and type(getattr(t, "_fields", None)) is tuple and all(type(f) is str for f in t._fields):
        return {"$namedtuple": {"type": str(t.__name__), "fields": list(t._fields), "values": [encode(x, other, d) for x in tuple.__iter__(v)]}}
    np = _numpy()
    if np is not None:
        if t is np.ndarray:
            return {"$ndarray": {"dtype": str(v.dtype), "shape": [int(n) for n in v.shape], "data": encode(v.tolist(), other, d)}}
        if isinstance(v, np.generic) and t.__module__ == "numpy":
            return {"$npscalar": {"dtype": str(v.dtype), "value": encode(v.item(), other, d)}}
    return other(v, depth)


def _numpy():
    return sys.modules.get("numpy")


def decode(v, special, depth=0):
    """Strict: only JSON's own values and the tags above; special(tag, doc) turns a $handle or an $enum into an object."""
    if depth > MAX_DEPTH:
        raise ValueError("nested deeper than %d levels" % MAX_DEPTH)
    if v is None or type(v) in (bool, int, str):
        return v
    if type(v) is float:
        return v
    d = depth + 1
    if type(v) is list:
        return [decode(x, special, d) for x in v]
    if type(v) is not dict or len(v) != 1:
        raise ValueError("not a value of the wire")
    (tag, x), = v.items()
    if tag == "$float":
        if x not in ("nan", "inf", "-inf"):
            raise ValueError("bad $float")
        return float(x)
    if tag == "$tuple":
        return tuple(decode(i, special, d) for i in _list(x))
    if tag == "$set":
        return set(decode(i, special, d) for i in _list(x))
    if tag == "$frozenset":
        return frozenset(decode(i, special, d) for i in _list(x))
    if tag == "$dict":
        out = {}
        for pair in _list(x):
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("bad $dict entry")
            out[decode(pair[0], special, d)] = decode(pair[1], special, d)
        return out
    if tag == "$bytes":
        return base64.b64decode(_str(x), validate=True)
    if tag == "$bytearray":
        return bytearray(base64.b64decode(_str(x), validate=True))
    if tag == "$complex":
        re, im = _list(x, 2)
        return complex(_num(decode(re, special, d)), _num(decode(im, special, d)))
    if tag == "$decimal":
        return decimal.Decimal(_str(x))
    if tag == "$fraction":
        n, den = _list(x, 2)
        return fractions.Fraction(_int(n), _int(den))
    if tag == "$datetime":
        return datetime.datetime.fromisoformat(_str(x))
    if tag == "$date":
        return datetime.date.fromisoformat(_str(x))
    if tag == "$time":
        return datetime.time.fromisoformat(_str(x))
    if tag == "$timedelta":
        days, secs, micros = _list(x, 3)
        return datetime.timedelta(days=_int(days), seconds=_int(secs), microseconds=_int(micros))
    if tag == "$range":
        a, b, c = _list(x, 3)
        return range(_int(a), _int(b), _int(c))
    if tag == "$path":
        import pathlib
        return pathlib.Path(_str(x))
    if tag == "$namedtuple":
        return namedtuple_value(_obj(x, ("type", "fields", "values")), special, d)
    if tag == "$ndarray":
        o = _obj(x, ("dtype", "shape", "data"))
        import numpy as np
        arr = np.array(decode(o["data"], special, d), dtype=np.dtype(_str(o["dtype"])))
        return arr.reshape([_int(n) for n in _list(o["shape"])])
    if tag == "$npscalar":
        o = _obj(x, ("dtype", "value"))
        import numpy as np
        return np.dtype(_str(o["dtype"])).type(decode(o["value"], special, d))
    if tag == "$handle" or tag == "$live":
        if type(x) is not dict:
            raise ValueError("bad $handle")
        return special(tag, x, d)
    if tag == "$enum":
        return special(tag, _obj(x, ("type", "name", "value")), d)
    raise ValueError("unknown tag")


def _list(x, n=None):
    if type(x) is not list or (n is not None and len(x) != n):
        raise ValueError("expected a list")
    return x


def _str(x):
    if type(x) is not str:
        raise ValueError("expected a string")
    return x


def _int(x):
    if type(x) is not int:
        raise ValueError("expected an integer")
    return x


def _num(x):
    if type(x) not in (int, float):
        raise ValueError("expected a number")
    return x


def _obj(x, keys):
    if type(x) is not dict or sorted(x) != sorted(keys):
        raise ValueError("bad tagged object")
    return x


_NAMEDTUPLES = {}


def namedtuple_value(o, special, d):
    import collections, keyword
    name, fields = _str(o["type"]), tuple(_str(f) for f in _list(o["fields"]))
    if not name.isidentifier() or keyword.iskeyword(name) or any(not f.isidentifier() or keyword.iskeyword(f) or f.startswith("_") for f in fields):
        raise ValueError("bad namedtuple")
    cls = _NAMEDTUPLES.get((name, fields))
    if cls is None:
        cls = _NAMEDTUPLES[(name, fields)] = collections.namedtuple(name, fields)
    values = [decode(v, special, d) for v in _list(o["values"], len(fields))]
    return cls(*values)


class EnumValue:
    """An enum member of the program's, by value: equal to (and the same object as) the same member."""
    __slots__ = ("type", "name", "value")

    def __init__(self, t, n, v):
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "name", n)
        object.__setattr__(self, "value", v)

    def __setattr__(self, k, v):
        raise AttributeError("an enum member cannot be changed")

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return hash((self.type, self.name))

    def __repr__(self):
        return "<%s.%s: %r>" % (self.type, self.name, self.value)


_ENUMS = {}


def enum_value(o, special, d):
    t, n, v = _str(o["type"]), _str(o["name"]), decode(o["value"], special, d)
    key = (t, n)
    got = _ENUMS.get(key)
    if got is None:
        got = _ENUMS[key] = EnumValue(t, n, v)
    return got


def dumps(doc):
    return json.dumps(doc, allow_nan=False, separators=(",", ":")) + "\n"
`;

/** The program's side: imports the program and answers the judge's requests. */
export const BRIDGE_SERVER_PY = String.raw`# The program's side of test_suite's process boundary: imports the program as a module and answers the
# judge's requests (get an attribute, call, iterate...) over fd 4 (requests in) and fd 3 (answers out).
# It runs in the program's process, so nothing here is trusted: the judge checks every answer and decides
# everything itself. What the program prints during a request is sent back with the answer, so that the
# tests can capture it.
import io, os, sys, traceback

sys.set_int_max_str_digits(0)
sys.dont_write_bytecode = True
WORK = os.getcwd()
REQ = os.fdopen(4, "rb", buffering=0)
ANS = os.fdopen(3, "wb", buffering=0)
for fd in (3, 4):
    os.set_inheritable(fd, False)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopsmith_wire as wire  # noqa: E402

sys.path[0] = WORK
MODULE = sys.argv[1]
objects = {}     # handle id -> object
ids = {}         # id(object) -> handle id (the object is kept alive by objects)
module = None


def describe_class(c):
    h = handle_id(c)
    base = None
    if isinstance(c, type) and issubclass(c, BaseException):
        for k in c.__mro__:
            if k.__module__ == "builtins":
                base = k.__name__
                break
    bases = [describe_class(b) for b in getattr(c, "__bases__", ()) if b.__module__ not in ("builtins",)] if isinstance(c, type) else []
    dc = getattr(c, "__dataclass_params__", None)
    return {"id": h, "name": str(getattr(c, "__name__", "?")), "module": str(getattr(c, "__module__", "?")),
            "exception": base, "bases": bases[:8], "dataclass": bool(dc is not None and dc.eq)}


def handle_id(o):
    k = id(o)
    h = ids.get(k)
    if h is None:
        h = len(objects) + 1
        objects[h] = o
        ids[k] = h
    return h


def as_handle(o, depth):
    if isinstance(o, type):
        return {"$handle": {"kind": "class", "class": describe_class(o)}}
    kind = "function" if callable(o) and (type(o).__name__ in ("function", "builtin_function_or_method", "method", "method-wrapper", "functools.partial", "staticmethod")) else "object"
    if type(o).__name__ == "module":
        kind = "module"
    return {"$handle": {"kind": kind, "id": handle_id(o), "name": str(getattr(o, "__name__", "")) if kind != "object" else "", "class": describe_class(type(o))}}


LIVE = (list, dict, set)


class Live:
    def __init__(self, value):
        self.value = value


def enc(v):
    if type(v) is Live:
        return {"$live": {"id": handle_id(v.value), "value": wire.encode(v.value, as_handle)}}
    return wire.encode(v, as_handle)


def special(tag, x, d):
    if tag == "$handle":
        h = x.get("id")
        if type(h) is not int or h not in objects:
            raise ValueError("unknown handle")
        return objects[h]
    # An enum member the judge got from us: the program's own member again.
    t, n = x["type"], x["name"]
    for o in list(objects.values()) + [getattr(module, k, None) for k in dir(module)]:
        if isinstance(o, type) and o.__name__ == t and hasattr(o, "__members__") and n in o.__members__:
            return o.__members__[n]
    raise ValueError("unknown enum member %s.%s" % (t, n))


def dec(v):
    return wire.decode(v, special)


def error_of(e):
    t = type(e)
    base = "Exception"
    for k in t.__mro__:
        if k.__module__ == "builtins":
            base = k.__name__
            break
    tb = "".join(traceback.format_exception(e))
    own = None if t.__module__ == "builtins" else describe_class(t)
    try:
        args = enc(list(e.args))
    except Exception:
        args = None
    return {"builtin": base, "class": own, "message": str(e)[:4000], "args": args, "traceback": tb[-4000:]}


def target_of(req):
    t = req.get("target")
    if t == "module":
        return module
    if type(t) is not int or t not in objects:
        raise LookupError("unknown handle %r" % (t,))
    return objects[t]


def perform(req):
    global module
    op = req["op"]
    if op == "init":
        import importlib
        module = importlib.import_module(MODULE)
        names = [n for n in dir(module) if not n.startswith("__")]
        exported = getattr(module, "__all__", None)
        return {"names": names, "all": [str(n) for n in exported] if isinstance(exported, (list, tuple)) else None}
    obj = target_of(req)
    if op == "getattr":
        value = getattr(obj, req["name"])
        if type(value) in LIVE:
            # A module's or object's own list, dict or set: the tests get a copy that changes it here too
            # (inflection.UNCOUNTABLES.add("ors") must reach the program).
            return Live(value)
        return value
    if op == "setattr":
        setattr(obj, req["name"], dec(req["value"]))
        return None
    if op == "delattr":
        delattr(obj, req["name"])
        return None
    if op == "call":
        args = dec(req["args"])
        kwargs = dec(req["kwargs"])
        result = obj(*args, **kwargs)
        return result, args, kwargs
    if op == "method":
        # A special method the judge's proxy was asked for (len, getitem, iter, next, repr...).
        name = req["name"]
        args = dec(req["args"])
        # operator's dunder functions (operator.__add__...), never its plain names (operator.add is a + b).
        fn = BUILTIN_OPS.get(name) or (getattr(operator, name, None) if name.startswith("__") else None) or getattr(type(obj), name)
        return fn(obj, *args), args, {}
    if op == "fields":
        import dataclasses
        return [[f.name, getattr(obj, f.name)] for f in dataclasses.fields(obj) if f.compare]
    if op == "release":
        for h in req.get("ids", []):
            o = objects.pop(h, None)
            if o is not None:
                ids.pop(id(o), None)
        return None
    raise ValueError("unknown op %r" % op)


MUTABLE = (list, dict, set, bytearray)
import operator  # noqa: E402
# What Python itself does for these, not only the class's own method (truth without __bool__ uses __len__).
BUILTIN_OPS = {"__bool__": bool, "__len__": len, "__iter__": iter, "__next__": next, "__repr__": repr, "__str__": str,
               "__int__": int, "__float__": float, "__round__": round, "__reversed__": reversed}


def answer(req):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    doc = {"id": req.get("id")}
    try:
        got = perform(req)
        if req["op"] in ("call", "method"):
            result, args, kwargs = got
            doc["ok"] = enc(result)
            # Arguments the call changed in place (a list it sorted, a dict it filled) go back too.
            changed = {}
            for i, a in enumerate(args):
                if type(a) in MUTABLE:
                    changed[str(i)] = enc(a)
            for k, a in kwargs.items():
                if type(a) in MUTABLE:
                    changed["k:" + k] = enc(a)
            if changed:
                doc["mutated"] = changed
        else:
            doc["ok"] = enc(got)
    except wire.Unsendable as e:
        doc = {"id": req.get("id"), "error": {"builtin": "TypeError", "class": None, "message": "the solution's result cannot cross to the tests' process: %s" % e, "args": None, "traceback": ""}}
    except BaseException as e:
        doc = {"id": req.get("id"), "error": error_of(e)}
    finally:
        sys.stdout, sys.stderr = saved
    doc["out"] = out.getvalue()[-100000:]
    doc["err"] = err.getvalue()[-100000:]
    return doc


def main():
    import json
    while True:
        line = REQ.readline()
        if not line:
            return
        try:
            req = json.loads(line)
        except ValueError:
            return
        try:
            data = wire.dumps(answer(req)).encode()
        except BaseException as e:
            data = wire.dumps({"id": req.get("id"), "error": {"builtin": "TypeError", "class": None, "message": "the answer could not be sent: %s" % type(e).__name__, "args": None, "traceback": ""}}).encode()
        view = memoryview(data)
        while view:
            view = view[ANS.write(view):]


main()
`;

/** The tests' side: the stand-in module's machinery, proxies and the checks on every answer. */
export const BRIDGE_CLIENT_PY = String.raw`# The tests' side of test_suite's process boundary. The module the tests import under the program's name
# is a stand-in: every attribute, call, iteration or comparison becomes a request to the program's process
# (fd 3 out, fd 4 in) and comes back as plain data or as a proxy. The program's code never runs here, so it
# cannot patch pytest, the assertions or the report, and it never sees the tests: the only things that
# cross are arguments and results. Everything the other side sends is checked; a reply out of protocol
# ends the bridge, and every later request fails.
import builtins, os, select, sys, json
import loopsmith_wire as wire

TIMEOUT = float(os.environ.get("LOOPSMITH_CALL_TIMEOUT", "30"))
MAX_LINE = 64 * 1024 * 1024
OUT = 3
IN = 4
MODULE = os.environ.get("LOOPSMITH_MODULE", "solution")


class SolutionProcessError(RuntimeError):
    """The solution's process did not answer as the bridge needs (it ended, hung, or broke the protocol)."""


_state = {"broken": None, "next": 1, "buf": b""}
for _fd in (OUT, IN):
    os.set_inheritable(_fd, False)


def _break(why):
    _state["broken"] = why
    raise SolutionProcessError(why)


def _read_line():
    buf = _state["buf"]
    deadline = None
    while b"\n" not in buf:
        if deadline is None:
            import time
            deadline = time.monotonic() + TIMEOUT
            _now = time.monotonic
        left = deadline - _now()
        if left <= 0:
            _state["buf"] = buf
            _break("the solution's process did not answer within %g s" % TIMEOUT)
        ready, _, _ = select.select([IN], [], [], left)
        if not ready:
            continue
        chunk = os.read(IN, 1 << 20)
        if not chunk:
            _break("the solution's process ended (it exited or crashed)")
        buf += chunk
        if len(buf) > MAX_LINE:
            _break("the solution's process sent an answer over %d bytes" % MAX_LINE)
    line, _, rest = buf.partition(b"\n")
    _state["buf"] = rest
    return line


def _request(doc):
    if _state["broken"]:
        raise SolutionProcessError(_state["broken"])
    rid = _state["next"]
    _state["next"] += 1
    doc["id"] = rid
    data = memoryview(wire.dumps(doc).encode())
    try:
        while data:
            data = data[os.write(OUT, data):]
    except OSError:
        _break("the solution's process ended (it exited or crashed)")
    try:
        ans = json.loads(_read_line())
    except ValueError:
        _break("the solution's process answered out of protocol")
    if type(ans) is not dict or ans.get("id") != rid or ("ok" in ans) == ("error" in ans):
        _break("the solution's process answered out of protocol")
    out, err = ans.get("out", ""), ans.get("err", "")
    if type(out) is not str or type(err) is not str:
        _break("the solution's process answered out of protocol")
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    if "error" in ans:
        _raise(ans["error"])
    try:
        return _decode(ans["ok"]), ans.get("mutated")
    except (ValueError, TypeError, KeyError, OverflowError, ArithmeticError):
        _break("the solution's process answered out of protocol")


# ---------------------------------------------------------------- values the other side sends

_classes = {}
_objects = {}


def _name(x, fallback):
    return x if type(x) is str and x.isidentifier() else fallback


_SAFE_BASES = {n: getattr(builtins, n) for n in dir(builtins) if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)}
# Raised here, these would stop the test run itself rather than fail one test.
for _n in ("SystemExit", "KeyboardInterrupt", "GeneratorExit", "BaseException", "BaseExceptionGroup"):
    _SAFE_BASES.pop(_n, None)


def _exception_base(name):
    return _SAFE_BASES.get(name, Exception) if type(name) is str else Exception


def _mirror(desc):
    """The tests' own class standing for one of the program's classes: real, local, built from plain data."""
    if type(desc) is not dict or type(desc.get("id")) is not int:
        raise ValueError("bad class")
    got = _classes.get(desc["id"])
    if got is not None:
        return got
    name = _name(desc.get("name"), "RemoteClass")
    ns = {"__module__": MODULE if desc.get("module") == MODULE else str(desc.get("module"))[:200], "_ls_id": desc["id"], "__qualname__": name}
    if desc.get("exception") is not None:
        cls = type(name, (_exception_base(desc["exception"]),), ns)
    else:
        bases = tuple(_mirror(b) for b in desc.get("bases") or [] if type(b) is dict and b.get("exception") is None)
        ns["_ls_dataclass"] = desc.get("dataclass") is True
        cls = RemoteMeta(name, bases or (RemoteObject,), ns)
    _classes[desc["id"]] = cls
    return cls


def _special(tag, x, depth):
    if tag == "$enum":
        return wire.enum_value(x, _special, depth)
    if tag == "$live":
        return _live(x, depth)
    kind = x.get("kind")
    if kind == "class":
        return _mirror(x.get("class"))
    h = x.get("id")
    if type(h) is not int:
        raise ValueError("bad handle")
    got = _objects.get(h)
    if got is not None:
        return got
    if kind == "function" or kind == "module":
        got = RemoteFunction(h, _name(x.get("name"), "function"))
    elif kind == "object":
        cls = _mirror(x.get("class"))
        if not isinstance(cls, RemoteMeta):
            raise ValueError("an exception object crosses as an error, not a value")
        got = object.__new__(cls)
        object.__setattr__(got, "_ls_id", h)
    else:
        raise ValueError("bad handle kind")
    _objects[h] = got
    return got


def _decode(v):
    got = wire.decode(v, _special)
    # A path the program names is never handed over on its behalf (see _hand_over).
    for p in _paths_in(got):
        if len(_named_by_program) < 100000:
            _named_by_program.add(p)
    return got


# ---------------------------------------------------------------- the program's own lists, dicts and sets

_lives = {}


def _live(x, depth):
    h = x.get("id")
    if type(h) is not int:
        raise ValueError("bad live value")
    value = wire.decode(x.get("value"), _special, depth + 1)
    got = _lives.get(h)
    kind = {list: LiveList, dict: LiveDict, set: LiveSet}.get(type(value))
    if kind is None:
        raise ValueError("bad live value")
    if got is None or type(got) is not kind:
        got = kind(value)
        object.__setattr__(got, "_ls_id", h)
        _lives[h] = got
    else:
        got._ls_refresh(value)
    return got


def _mutator(base, name):
    local = getattr(base, name)

    def method(self, *args):
        _method(self, name, *args)
        return local(self, *args)
    method.__name__ = name
    return method


class LiveList(list):
    """One of the program's lists as the tests see it: a list, whose changes are made in the program too."""

    def _ls_refresh(self, value):
        list.__setitem__(self, slice(None), value)

    def sort(self, *, key=None, reverse=False):
        # A key function cannot cross: sorted here, then the program's list is given the same order.
        list.sort(self, key=key, reverse=reverse)
        _method(self, "clear")
        _method(self, "extend", list(self))


class LiveDict(dict):
    """One of the program's dicts as the tests see it: a dict, whose changes are made in the program too."""

    def _ls_refresh(self, value):
        dict.clear(self)
        dict.update(self, value)


class LiveSet(set):
    """One of the program's sets as the tests see it: a set, whose changes are made in the program too."""

    def _ls_refresh(self, value):
        set.clear(self)
        set.update(self, value)


for _m in ("append", "extend", "insert", "remove", "pop", "clear", "reverse", "__setitem__", "__delitem__", "__iadd__", "__imul__"):
    setattr(LiveList, _m, _mutator(list, _m))
for _m in ("__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault", "__ior__"):
    setattr(LiveDict, _m, _mutator(dict, _m))
for _m in ("add", "discard", "remove", "pop", "clear", "update", "difference_update", "intersection_update",
              "symmetric_difference_update", "__ior__", "__iand__", "__isub__", "__ixor__"):
    setattr(LiveSet, _m, _mutator(set, _m))


def _raise(e):
    if type(e) is not dict:
        _break("the solution's process answered out of protocol")
    message = e.get("message") if type(e.get("message")) is str else ""
    cls = _exception_base(e.get("builtin"))
    if type(e.get("class")) is dict and e["class"].get("exception") is not None:
        try:
            cls = _mirror(e["class"])
        except ValueError:
            pass
    args = None
    if e.get("args") is not None:
        try:
            args = _decode(e["args"])
        except (ValueError, TypeError):
            args = None
    try:
        exc = cls(*args) if type(args) is list else cls(message)
    except Exception:
        exc = cls(message)
    tb = e.get("traceback")
    if type(tb) is str and tb:
        exc.add_note("(raised in the solution's process)\n" + tb[-4000:])
    raise exc


# ---------------------------------------------------------------- values the tests send

def _other(v, depth):
    if isinstance(v, (LiveList, LiveDict, LiveSet)):
        return {"$handle": {"id": object.__getattribute__(v, "_ls_id")}}
    if isinstance(v, (RemoteObject, RemoteFunction)):
        return {"$handle": {"id": object.__getattribute__(v, "_ls_id")}}
    if isinstance(v, type) and "_ls_id" in v.__dict__:
        return {"$handle": {"id": v.__dict__["_ls_id"]}}
    if isinstance(v, wire.EnumValue):
        return {"$enum": {"type": v.type, "name": v.name, "value": wire.encode(v.value, _other, depth + 1)}}
    if not isinstance(v, RemoteObject) and isinstance(v, os.PathLike):
        p = os.fspath(v)
        if type(p) is str:
            return {"$path": p}
    what = "a function" if callable(v) else "a value of type %s" % type(v).__name__
    raise wire.Unsendable("test_suite runs the solution in a process of its own, and %s cannot be sent to it: "
                          "only plain data (numbers, strings, lists, tuples, dicts, sets, bytes...) and the "
                          "solution's own objects cross" % what)


def _encode(v):
    for p in _paths_in(v):
        _hand_over(p)
    try:
        return wire.encode(v, _other)
    except wire.Unsendable as e:
        raise TypeError(str(e)) from None


def _apply_mutations(args, kwargs, mutated):
    if type(mutated) is not dict:
        return
    for key, raw in mutated.items():
        if type(key) is not str:
            continue
        if key.startswith("k:"):
            arg = kwargs.get(key[2:])
        elif key.isdigit() and int(key) < len(args):
            arg = args[int(key)]
        else:
            continue
        new = _decode(raw)
        if type(arg) is list and type(new) is list:
            arg[:] = new
        elif type(arg) is dict and type(new) is dict:
            arg.clear()
            arg.update(new)
        elif type(arg) is set and type(new) is set:
            arg.clear()
            arg.update(new)
        elif type(arg) is bytearray and type(new) is bytearray:
            arg[:] = new


def _call(target, args, kwargs):
    value, mutated = _request({"op": "call", "target": target, "args": _encode(list(args)), "kwargs": _encode(dict(kwargs))})
    _apply_mutations(args, kwargs, mutated)
    return value


def _getattr(target, name):
    return _request({"op": "getattr", "target": target, "name": name})[0]


def _method(obj, name, *args):
    value, mutated = _request({"op": "method", "target": object.__getattribute__(obj, "_ls_id"), "name": name, "args": _encode(list(args))})
    _apply_mutations(args, {}, mutated)
    return value


# ---------------------------------------------------------------- files the tests hand to the program
# The judge creates everything private (umask 077, and pytest makes its temporary directories 0700), so
# the program's process cannot read what the tests write. A test that passes the program a path in the
# temporary directory (tmp_path, tmpdir, tempfile) hands that file or directory over: the judge opens it
# to the program's uid, and nothing else. A file: readable and writable. A directory: listable, with every
# file in it readable and writable. A path that does not exist yet (an output to write): the judge makes
# it, an empty file the program may write (and the directories above it). The directories above get search
# permission only, so the tests' other files stay out of reach, named or not. The program never gets to add,
# remove or rename an entry in the tests' directories: a link it planted there would make the tests' own
# reads and writes (which follow links, under the judge's uid) reach the judge's private files. A path the
# program itself sent the tests is never handed over.

import stat, tempfile  # noqa: E402

_TMP = os.path.realpath(tempfile.gettempdir())
_ME = os.getuid()
_named_by_program = set()


def _paths_in(v, depth=0, out=None):
    """Absolute paths among a value's strings and path objects (containers walked a few levels deep)."""
    if out is None:
        out = []
    if depth > 20 or len(out) > 1000:
        return out
    if type(v) is str:
        if v.startswith("/") and len(v) < 4096 and "\0" not in v:
            out.append(v)
    elif isinstance(v, (RemoteObject, RemoteFunction)):
        pass
    elif isinstance(v, dict):
        for k, x in dict.items(v):
            _paths_in(k, depth + 1, out)
            _paths_in(x, depth + 1, out)
    elif isinstance(v, (list, tuple, set, frozenset)):
        for x in v:
            _paths_in(x, depth + 1, out)
    elif isinstance(v, os.PathLike):
        p = os.fspath(v)
        if type(p) is str:
            _paths_in(p, depth, out)
    return out


def _open_up(path, add):
    """Adds permission bits to one of the judge's own files or directories (never through a link)."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if st.st_uid != _ME or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return
    try:
        os.chmod(path, stat.S_IMODE(st.st_mode) | add)
    except OSError:
        pass


def _hand_over(p):
    if _TMP == "/" or p in _named_by_program:
        return
    try:
        real = os.path.realpath(p)
    except (OSError, ValueError):
        return
    if not real.startswith(_TMP + "/") or real in _named_by_program:
        return
    try:
        st = os.lstat(real)
    except OSError:
        st = None
    if st is None:
        # An output to write: made here, empty, the program's to write; its directories the judge's.
        parent = os.path.dirname(real)
        if parent != _TMP and not parent.startswith(_TMP + "/"):
            return
        try:
            os.makedirs(parent, exist_ok=True)
            fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError:
            return
        try:
            os.fchmod(fd, 0o666)
        finally:
            os.close(fd)
    elif stat.S_ISDIR(st.st_mode):
        seen = 0
        for root, dirs, files in os.walk(real):
            _open_up(root, stat.S_IROTH | stat.S_IXOTH)
            for f in files:
                _open_up(os.path.join(root, f), stat.S_IROTH | stat.S_IWOTH)
            seen += 1 + len(files)
            if seen > 10000:
                break
    else:
        _open_up(real, stat.S_IROTH | stat.S_IWOTH)
    parent = os.path.dirname(real)
    while parent.startswith(_TMP + "/"):
        _open_up(parent, stat.S_IXOTH)
        parent = os.path.dirname(parent)


# ---------------------------------------------------------------- proxies

class RemoteFunction:
    """One of the program's functions (or bound methods): calling it calls it in the program's process."""

    def __init__(self, h, name):
        object.__setattr__(self, "_ls_id", h)
        object.__setattr__(self, "__name__", name)

    def __call__(self, *args, **kwargs):
        return _call(object.__getattribute__(self, "_ls_id"), args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _getattr(object.__getattribute__(self, "_ls_id"), name)

    def __repr__(self):
        return "<function %s (in the solution's process)>" % object.__getattribute__(self, "__name__")


class RemoteMeta(type):
    """The metaclass of the tests' stand-ins for the program's classes: construction and class attributes go remote."""

    def __call__(cls, *args, **kwargs):
        return _call(cls.__dict__["_ls_id"], args, kwargs)

    def __getattr__(cls, name):
        if name.startswith("_ls_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return _getattr(cls.__dict__["_ls_id"], name)


def _forward(name):
    def method(self, *args):
        return _method(self, name, *args)
    method.__name__ = name
    return method


class RemoteObject:
    """One of the program's objects. Equality is identity (a program's own __eq__ never decides a test),
    except for dataclasses with their generated __eq__, compared here field by field."""

    def __getattr__(self, name):
        if name.startswith("_ls_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return _getattr(object.__getattribute__(self, "_ls_id"), name)

    def __setattr__(self, name, value):
        if name.startswith("_ls_"):
            raise AttributeError(name)
        _request({"op": "setattr", "target": object.__getattribute__(self, "_ls_id"), "name": name, "value": _encode(value)})

    def __delattr__(self, name):
        _request({"op": "delattr", "target": object.__getattribute__(self, "_ls_id"), "name": name})

    def __eq__(self, other):
        if self is other:
            return True
        cls = type(self)
        if cls.__dict__.get("_ls_dataclass") and type(other) is cls:
            mine = _request({"op": "fields", "target": object.__getattribute__(self, "_ls_id")})[0]
            theirs = _request({"op": "fields", "target": object.__getattribute__(other, "_ls_id")})[0]
            return mine == theirs
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = object.__hash__

    def __repr__(self):
        text = _method(self, "__repr__")
        return text if type(text) is str else "<%s object (in the solution's process)>" % type(self).__name__

    def __str__(self):
        text = _method(self, "__str__")
        return text if type(text) is str else repr(self)

    def __bool__(self):
        value = _method(self, "__bool__")
        if type(value) is not bool:
            raise TypeError("__bool__ should return bool")
        return value

    def __len__(self):
        value = _method(self, "__len__")
        if type(value) is not int:
            raise TypeError("__len__ should return an int")
        return value

    def __iter__(self):
        return _method(self, "__iter__")

    def __next__(self):
        return _method(self, "__next__")

    def __call__(self, *args, **kwargs):
        return _call(object.__getattribute__(self, "_ls_id"), args, kwargs)

    def __enter__(self):
        return _method(self, "__enter__")

    def __exit__(self, *exc):
        # The exception itself stays here: the program's __exit__ sees that one was raised, not which.
        return _method(self, "__exit__", *((None, None, None) if exc[0] is None else (Exception, None, None)))


for _n in ("__getitem__", "__setitem__", "__delitem__", "__contains__", "__lt__", "__le__", "__gt__", "__ge__", "__add__",
           "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__",
           "__mod__", "__pow__", "__neg__", "__pos__", "__abs__", "__int__", "__float__", "__index__", "__round__",
           "__reversed__", "__matmul__", "__and__", "__or__", "__xor__", "__invert__"):
    setattr(RemoteObject, _n, _forward(_n))


def install(g):
    """Makes the module whose globals are g the stand-in for the program (its name is the program's)."""
    info = _request({"op": "init"})[0]
    names = info.get("names") if type(info) is dict else None
    exported = info.get("all") if type(info) is dict else None
    if type(names) is not list or not all(type(n) is str for n in names):
        _break("the solution's process answered out of protocol")
    g["__all__"] = [n for n in exported if type(n) is str] if type(exported) is list else [n for n in names if not n.startswith("_")]

    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _getattr("module", name)

    g["__getattr__"] = __getattr__
    g["__dir__"] = lambda: sorted(set(names) | {"__all__"})
`;

/** pytest's entry point in the judge's process. */
export const JUDGE_PYTEST_PY = String.raw`# The judge's entry point: pytest, started by LoopSmith under the judge's own uid, with nothing of the
# program's able to run before it (no site customisation: python3 -I; no plugins found through installed
# metadata; the stand-in module on the path after the standard library).
import os, sys

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.append(here)
import pytest  # noqa: E402


class Seal:
    """Once the tests are collected (imported), their source is read into linecache (for tracebacks) and the
    files are made unreadable, to this process too: a test that reads a path the program controls (a link
    the program made to the hidden tests) and hands what it read back can no longer reach them."""

    def pytest_collection_finish(self, session):
        import linecache
        for root, _, files in os.walk(os.path.join(here, "tests")):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    linecache.updatecache(path)
                    try:
                        os.chmod(path, 0)
                    except OSError:
                        pass


sys.exit(pytest.main(sys.argv[1:], plugins=[Seal()]))
`;
