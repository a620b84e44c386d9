# Zamburak prelude: the trusted helpers every lowered plan runs on. Plan code never names anything here:
# plan identifiers are renamed to end in "_", and every name below starts with "_" or is a Python builtin.
#
# Representation. A scalar is a tuple (raw, label). A container is a tuple (box, label) where box is a list
# [kind, items, structure]: kind _KL list, _KT tuple, _KD dict, _KS set (bytes, see below). items: a list of boxed values for
# 'l'/'t'; for 'd' a dict raw_key -> (boxed_key, boxed_value); for 's' a dict raw_element -> boxed_element.
# A label is an int (see src/label.rs). The label of a reference joins into the structure on every read.
# A label's join is `a | b` (src/label.rs stores the fields that intersect inverted), and 0 is its identity.
#
# This text is compiled once, at build time (build.rs), into a Monty session that every run loads; the plan's
# own code is fed to it afterwards and starts by setting _STRICT, _LIT, _UV and _NUV (compiler/mod.rs, `link`).
# Top-level code here must therefore not compute with those four: they are placeholders until then.
#
# Module structure (each part under a `# ---- name ----` banner):
#   state         the placeholders the plan's code sets, box kinds, the KeyError marker
#   labels        joins, influence (_inf), strict assignment (_as), raising after branches (_rz), violations
#   boxes         making and reading containers: _box, _raw, _mk/_mkd/_mks, _deep (a value's whole label),
#                 _elems, _struct, _unpack
#   mutation      no-sensitive-upgrade (_nsu), _mut, pre-raising what a branch may mutate (_pr, _prp)
#   subscripts    c[i], c[lo:hi:st] and c[i] = v (_gi, _gs, _si)
#   calls         calling plan functions under pc (_call, _call1, _callv) and returning from them (_ret)
#   operators     binary operators and comparisons, with fast paths for scalars
#   f-strings     formatting and joining pieces
#   builtins      one helper per builtin the subset allows (src/plan/catalogue.rs)
#   json and re   the two modules a plan may import
#   methods       one helper per catalogue row and receiver type, `_<type>_<method>`, and their fast paths
#   fused idioms  one call for two or three (compiler/fused.rs)
#
# Glossary of the short names: v a boxed value (raw, label); c a container value; x its box [kind, items,
# structure]; l a label; s a structure label; pc the control context's label; _UV/_NUV the bits an
# influence sets and keeps; _LIT the plan's literal label; _UNDEF a variable not yet assigned; line the
# plan's line, for a violation's message.

import json
import re

# ---- state -------------------------------------------------------------------------------------------
_STRICT = True
_LIT = 0
_UV = 0
_NUV = 0
_NEUTRAL = 0
_UNDEF = ['undefined']
# Box kinds are bytes: a type no plan value can ever hold (the subset has no bytes literal, no builtin or
# method that makes bytes, and tool results are JSON), so nothing a plan builds can read as a box, whatever
# strings it puts in a list (docs/lowering.md, "Unforgeable boxes"). The host writes the same bytes.
_KL = b'l'
_KT = b't'
_KD = b'd'
_KS = b's'
# Shared empty arguments for method calls without any (helpers never mutate them).
_NOARGS = ()
_NOKW = {}
# The boxed key of the dict lookup whose KeyError is ending the run (None otherwise), read back by the
# runtime to show a key the plan wrote (src/lower/mod.rs, MISSING_KEY). Plans cannot catch exceptions; the
# one helper that does (_prp) clears it, so a value here always belongs to the error that stopped the run.
_ZK = [None]


# ---- labels ------------------------------------------------------------------------------------------
def _j(a, b):
    return a | b


def _inf(l):
    if l & 1:
        return l | _UV
    return l & _NUV


def _isfn(x):
    return type(x).__name__ == 'function'


def _violation(line):
    _zb_violation(_zline=line)


def _ld(v, name):
    if v is _UNDEF:
        raise NameError("name '" + name + "' is not defined")
    return v


def _rz(v, l):
    # Raise a variable's label after a branch or loop that may have assigned it (not-taken branches).
    if v is _UNDEF:
        return v
    a = v[1]
    j = a | l
    if j == a:
        return v
    return (v[0], j)


def _as(v, pc):
    # Joining the neutral pc is the identity: skip the allocation in the common case.
    if _STRICT and pc != _NEUTRAL:
        l = v[1]
        return (v[0], l | pc)
    return v


def _jv(v, l):
    return (v[0], (v[1] | l))


def _isc(v):
    return type(v[0]) is list


def _sl(v):
    # Structure label of a container reference: what its length, keys and order reveal.
    return (v[1] | v[0][2])


# ---- boxes -------------------------------------------------------------------------------------------
def _deep(v, seen=None):
    # `seen` (by object id) makes self-containing containers terminate.
    x = v[0]
    if type(x) is list and seen is None and (x[0] == _KL or x[0] == _KT):
        # The common case, a list of scalars, needs neither recursion nor `seen`.
        l = v[1] | x[2]
        for e in x[1]:
            if type(e[0]) is list:
                return _deep(v, {})
            l = l | e[1]
        return l
    if type(x) is list:
        if seen is None:
            seen = {}
        key = id(x)
        if key in seen:
            return (v[1] | x[2])
        seen[key] = True
        l = (v[1] | x[2])
        k = x[0]
        if k == _KL or k == _KT:
            for e in x[1]:
                # A scalar element's deep label is its label: no call for it.
                if type(e[0]) is list:
                    l = l | _deep(e, seen)
                else:
                    l = l | e[1]
        elif k == _KD:
            for kv in x[1].values():
                a = kv[0]
                b = kv[1]
                if type(a[0]) is list:
                    l = l | _deep(a, seen)
                else:
                    l = l | a[1]
                if type(b[0]) is list:
                    l = l | _deep(b, seen)
                else:
                    l = l | b[1]
        else:
            for e in x[1].values():
                if type(e[0]) is list:
                    l = l | _deep(e, seen)
                else:
                    l = l | e[1]
        return l
    return v[1]


def _raw(v, memo=None):
    # `memo` (by object id) rebuilds self-containing containers as self-containing raw values, like Python.
    x = v[0]
    t = type(x)
    if t is str or t is int or t is float or t is bool or x is None:
        return x
    if t is list:
        if memo is None:
            memo = {}
        key = id(x)
        if key in memo:
            return memo[key]
        k = x[0]
        if k == _KL:
            out = []
            memo[key] = out
            for e in x[1]:
                r = e[0]
                tr = type(r)
                if tr is str or tr is int or tr is float or tr is bool or r is None:
                    out.append(r)
                else:
                    out.append(_raw(e, memo))
            return out
        if k == _KT:
            return tuple([_raw(e, memo) for e in x[1]])
        if k == _KD:
            out = {}
            memo[key] = out
            for rk, kv in x[1].items():
                out[rk] = _raw(kv[1], memo)
            return out
        return set(x[1].keys())
    if _isfn(x):
        raise TypeError('a function cannot be used as data here')
    return x


def _box(x, l):
    t = type(x)
    if t is list:
        return ([_KL, [(e, l) if type(e) is str else _box(e, l) for e in x], l], l)
    if t is tuple:
        return ([_KT, [_box(e, l) for e in x], l], l)
    if t is dict:
        d = {}
        for k, e in x.items():
            d[k] = (_box(k, l), _box(e, l))
        return ([_KD, d, l], l)
    if t is set:
        d = {}
        for e in x:
            d[e] = _box(e, l)
        return ([_KS, d, l], l)
    return (x, l)


def _key(k):
    # The raw, hashable form of a boxed key.
    r = k[0]
    t = type(r)
    if t is str or t is int:
        return r
    r = _raw(k)
    if type(r) is list or type(r) is dict or type(r) is set:
        raise TypeError("unhashable type: '" + type(r).__name__ + "'")
    return r


def _mk(kind, items, pc):
    s = _LIT
    if _STRICT:
        s = (s | pc)
        items = [(e[0], (e[1] | pc)) for e in items]
    return ([kind, items, s], _LIT)


def _mkd(keys, vals, pc):
    s = _LIT
    if _STRICT:
        s = (s | pc)
    d = {}
    i = 0
    for k in keys:
        v = vals[i]
        if _STRICT:
            v = (v[0], (v[1] | pc))
        d[_key(k)] = (k, v)
        s = (s | _deep(k))
        i += 1
    return ([_KD, d, s], _LIT)


def _mks(items, pc):
    s = _LIT
    if _STRICT:
        s = (s | pc)
    d = {}
    for e in items:
        # Python keeps the first of equal elements ({1, True} is {1}); the later one's label still joins
        # the structure, since whether it was kept depends on it.
        rk = _key(e)
        if rk not in d:
            d[rk] = e
        s = (s | _deep(e))
    return ([_KS, d, s], _LIT)


def _new(kind, items, s):
    return ([kind, items, s], _LIT)


def _cl(v):
    # The label of a value used as a condition: a container's truthiness is its length, so its structure
    # label counts, not only its reference label.
    x = v[0]
    if type(x) is list:
        l = v[1]
        s = x[2]
        return l | s
    return v[1]


def _tr(v):
    x = v[0]
    if type(x) is list:
        return len(x[1]) > 0
    return bool(x)


def _elems(v):
    # The elements of an iterable, each joined with the influence of its structure.
    x = v[0]
    if type(x) is list:
        ch = _inf((v[1] | x[2]))
        k = x[0]
        if k == _KL or k == _KT:
            # An element whose label already carries `ch` is reused as it is (no new tuple).
            return [e if (e[1] | ch) == e[1] else (e[0], e[1] | ch) for e in x[1]]
        if k == _KD:
            return [(kv[0][0], (kv[0][1] | ch)) for kv in x[1].values()]
        return [(e[0], (e[1] | ch)) for e in x[1].values()]
    if type(x) is str:
        l = v[1] | _UV
        return [(c, l) for c in x]
    raise TypeError("'" + type(x).__name__ + "' object is not iterable")


def _struct(v):
    # Structure label of any iterable (a string's is its own label).
    if type(v[0]) is list:
        return _sl(v)
    return v[1] | _UV


def _unpack(v, n):
    es = _elems(v)
    if len(es) != n:
        raise ValueError('cannot unpack ' + str(len(es)) + ' values into ' + str(n))
    return es


# ---- mutation ----------------------------------------------------------------------------------------
def _nsu(c, pc, line):
    # No-sensitive-upgrade: a container may only be mutated under a pc its structure already carries.
    if _STRICT:
        s = c[0][2]
        if ((s | pc) | _UV) != (s | _UV):
            _violation(line)


def _mut(c, extra, pc, line):
    _nsu(c, pc, line)
    x = c[0]
    l = (x[2] | extra)
    if _STRICT:
        l = (l | pc)
    x[2] = l


def _pr(c, l):
    # Pre-raise a container that a branch or loop may mutate.
    if c is _UNDEF:
        return
    if type(c[0]) is list:
        c[0][2] = (c[0][2] | l)


def _prp(f, l):
    # Pre-raise a nested receiver; a receiver that does not exist yet cannot be mutated either.
    try:
        c = f()
    except Exception:
        _ZK[0] = None
        return
    _pr(c, l)


# ---- subscripts --------------------------------------------------------------------------------------
def _gi(c, i):
    x = c[0]
    if type(x) is list:
        ch = _inf(((c[1] | x[2]) | i[1]))
        k = x[0]
        if k == _KL or k == _KT:
            r = i[0]
            if type(r) is not int and type(r) is not bool:
                raise TypeError('indices must be integers')
            e = x[1][r]
            return (e[0], (e[1] | ch))
        if k == _KD:
            r = i[0]
            t = type(r)
            if t is str or t is int:
                try:
                    kv = x[1][r]
                except KeyError:
                    _ZK[0] = i
                    raise
            else:
                kv = x[1][_key(i)]
            e = kv[1]
            return (e[0], (e[1] | ch))
        raise TypeError("'set' object is not subscriptable")
    if _isfn(x):
        raise TypeError("'function' object is not subscriptable")
    return (x[_raw(i)], (c[1] | i[1]) | _UV)


def _gs(c, lo, hi, st):
    bl = ((lo[1] | hi[1]) | st[1])
    x = c[0]
    if type(x) is list:
        k = x[0]
        if k != _KL and k != _KT:
            raise TypeError('only lists, tuples and strings can be sliced')
        ch = _inf(((c[1] | x[2]) | bl))
        items = [(e[0], (e[1] | ch)) for e in x[1][lo[0]:hi[0]:st[0]]]
        return _new(k, items, (((x[2] | c[1]) | bl) | _LIT))
    return (x[lo[0]:hi[0]:st[0]], (c[1] | bl) | _UV)


def _si(c, i, v, pc, line):
    x = c[0]
    if type(x) is not list:
        raise TypeError('object does not support item assignment')
    k = x[0]
    if k != _KL and k != _KD:
        raise TypeError("'" + ('tuple' if k == _KT else 'set') + "' object does not support item assignment")
    s = x[2]
    if _STRICT and pc != _NEUTRAL:
        # No-sensitive-upgrade, then the value and the structure join pc.
        if ((s | pc) | _UV) != (s | _UV):
            _violation(line)
        lv = v[1]
        v = (v[0], lv | pc)
        s = s | pc
    il = i[1]
    il = (il | _UV) if il & 1 else (il & _NUV)
    s = s | il
    if k == _KD:
        r = i[0]
        t = type(r)
        if t is str or t is int:
            # A flat key: it is its own raw form and its label is its deep label.
            x[1][r] = (i, v)
            lk = i[1]
            x[2] = s | lk
            return
    if k == _KL:
        r = i[0]
        if type(r) is not int and type(r) is not bool:
            raise TypeError('list indices must be integers')
        x[1][r] = v
    else:
        x[1][_key(i)] = (i, v)
        s = (s | _deep(i))
    x[2] = s


# ---- calls -------------------------------------------------------------------------------------------
def _call(f, pc, *args, **kw):
    fn = f[0]
    t = type(fn).__name__
    if t != 'function':
        raise TypeError("'" + t + "' object is not callable")
    # The callee runs under pc joined with the influence of the function value's label (written out).
    l = f[1]
    l = (l | _UV) if l & 1 else (l & _NUV)
    return fn(*args, _zp=pc | l, **kw)


def _call1(f, pc, a):
    # `_call(f, pc, a)`: one positional argument, no keywords (without packing `*args, **kw`).
    fn = f[0]
    t = type(fn).__name__
    if t != 'function':
        raise TypeError("'" + t + "' object is not callable")
    l = f[1]
    l = (l | _UV) if l & 1 else (l & _NUV)
    return fn(a, _zp=pc | l)


def _callv(f, args, pc):
    return _call(f, pc, *args)


def _ret(v, pc, xf):
    l = (v[1] | xf)
    if _STRICT:
        l = (l | pc)
    return (v[0], l)


# ---- operators ----------------------------------------------------------------------------------------

def _seq_add(a, b):
    xa = a[0]
    xb = b[0]
    if xa[0] != xb[0] or (xa[0] != _KL and xa[0] != _KT):
        raise TypeError('can only concatenate a list to a list and a tuple to a tuple')
    ca = _inf(_sl(a))
    cb = _inf(_sl(b))
    items = [(e[0], (e[1] | ca)) for e in xa[1]] + [(e[0], (e[1] | cb)) for e in xb[1]]
    return _new(xa[0], items, (_sl(a) | _sl(b)))


def _seq_mul(a, n):
    xa = a[0]
    if xa[0] != _KL and xa[0] != _KT:
        raise TypeError('only lists and tuples can be repeated')
    r = n[0]
    if type(r) is not int and type(r) is not bool:
        raise TypeError("can't multiply sequence by non-int")
    ch = _inf((_sl(a) | n[1]))
    items = [(e[0], (e[1] | ch)) for e in xa[1]] * r
    return _new(xa[0], items, (_sl(a) | n[1]))


def _bin(op, a, b):
    ca = type(a[0]) is list
    cb = type(b[0]) is list
    if ca or cb:
        if op == '+' and ca and cb:
            return _seq_add(a, b)
        if op == '*' and ca and not cb:
            return _seq_mul(a, b)
        if op == '*' and cb and not ca:
            return _seq_mul(b, a)
        if op == '|' and ca and cb and a[0][0] == _KS and b[0][0] == _KS:
            return _set_op('union', a, b)
        if op == '&' and ca and cb and a[0][0] == _KS and b[0][0] == _KS:
            return _set_op('intersection', a, b)
        if op == '-' and ca and cb and a[0][0] == _KS and b[0][0] == _KS:
            return _set_op('difference', a, b)
        raise TypeError('unsupported operand types for ' + op)
    x = a[0]
    y = b[0]
    if _isfn(x) or _isfn(y):
        raise TypeError('unsupported operand type: function')
    l = (a[1] | b[1]) | _UV
    if op == '+':
        return (x + y, l)
    if op == '-':
        return (x - y, l)
    if op == '*':
        return (x * y, l)
    if op == '/':
        return (x / y, l)
    if op == '//':
        return (x // y, l)
    if op == '%':
        if type(x) is str:
            raise TypeError('%-formatting is not supported; use an f-string')
        return (x % y, l)
    if op == '**':
        return (x ** y, l)
    if op == '<<':
        return (x << y, l)
    if op == '>>':
        return (x >> y, l)
    if op == '&':
        return (x & y, l)
    if op == '|':
        return (x | y, l)
    if op == '^':
        return (x ^ y, l)
    raise TypeError('unsupported operator ' + op)


# Fast paths for the common scalar cases; anything else goes through `_bin`/`_cmp`.
def _add(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x + y, (la | lb) | _UV)
    return _bin('+', a, b)


def _sub(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is float) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x - y, (la | lb) | _UV)
    return _bin('-', a, b)


def _mul(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is float) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x * y, (la | lb) | _UV)
    return _bin('*', a, b)


def _mod(a, b):
    x = a[0]
    y = b[0]
    if type(x) is int and type(y) is int:
        la = a[1]
        lb = b[1]
        return (x % y, (la | lb) | _UV)
    return _bin('%', a, b)


def _fdiv(a, b):
    x = a[0]
    y = b[0]
    if type(x) is int and type(y) is int:
        la = a[1]
        lb = b[1]
        return (x // y, (la | lb) | _UV)
    return _bin('//', a, b)


def _eq(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float or tx is bool) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x == y, (la | lb) | _UV)
    return _cmp('==', a, b)


def _ne(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float or tx is bool) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x != y, (la | lb) | _UV)
    return _cmp('!=', a, b)


def _lt(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float or tx is bool) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x < y, (la | lb) | _UV)
    return _cmp('<', a, b)


def _gt(a, b):
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float or tx is bool) and type(y) is tx:
        la = a[1]
        lb = b[1]
        return (x > y, (la | lb) | _UV)
    return _cmp('>', a, b)


def _iop(op, a, b, pc, line):
    # Augmented assignment: lists extend in place (every alias sees it), everything else rebinds.
    if op == '+' and type(a[0]) is list and a[0][0] == _KL:
        _m_extend(a, b, pc, line)
        return a
    return _bin(op, a, b)


def _un(op, a):
    if op == 'not':
        # A container's truth value is its length: the structure label (the structure invariant).
        return (not _tr(a), _cl(a) | _UV)
    x = a[0]
    if type(x) is list or _isfn(x):
        raise TypeError('bad operand type for unary ' + op)
    l = a[1] | _UV
    if op == '-':
        return (-x, l)
    if op == '+':
        return (+x, l)
    if op == '~':
        return (~x, l)
    raise TypeError('unsupported unary operator ' + op)


def _cmp(op, a, b):
    if op == 'is' or op == 'is not':
        same = a[0] is b[0]
        if op == 'is not':
            same = not same
        return (same, (a[1] | b[1]) | _UV)
    if op == 'in' or op == 'not in':
        r = _in(a, b)
        if op == 'not in':
            return (not r[0], r[1])
        return r
    # One memo for both sides: the same container becomes the same raw object, so Python's identity
    # shortcut applies (and self-containing values compare as they do plainly).
    m = {}
    x = _raw(a, m)
    y = _raw(b, m)
    l = (_deep(a) | _deep(b)) | _UV
    if op == '==':
        return (x == y, l)
    if op == '!=':
        return (x != y, l)
    if op == '<':
        return (x < y, l)
    if op == '<=':
        return (x <= y, l)
    if op == '>':
        return (x > y, l)
    if op == '>=':
        return (x >= y, l)
    raise TypeError('unsupported comparison ' + op)


def _in(a, b):
    l = (_deep(a) | _deep(b)) | _UV
    x = b[0]
    if type(x) is list:
        k = x[0]
        if k == _KD or k == _KS:
            # An unhashable value raises TypeError, as it does plainly.
            return (_key(a) in x[1], l)
        ra = _raw(a)
        for e in x[1]:
            if _raw(e) == ra:
                return (True, l)
        return (False, l)
    return (_raw(a) in x, l)


# ---- f-strings ------------------------------------------------------------------------------------------

def _fv(v, conv, spec):
    r = v[0]
    if type(r) is list:
        r = _raw(v)
        l = _deep(v)
    else:
        if _isfn(r):
            r = _raw(v)
        l = v[1]
    if conv == 'r':
        r = repr(r)
    elif conv == 's':
        r = str(r)
    sp = ''
    if spec is not None:
        sp = spec[0]
        l = (l | spec[1])
    return (f'{r:{sp}}', l | _UV)


def _fs(parts):
    # An f-string with its literal parts given as str and its other parts as boxed values, without
    # conversion or format spec (compiler/expr.rs `fstring`, a fast path): a str value is its own text
    # (what `_fv` makes of it, with the same label), every other value goes through `_fv`. The same text
    # and label as `_fcat` of the parts' `_fv`s (a literal part's label is `_LIT`, where `l` starts).
    s = []
    l = _LIT
    for p in parts:
        if type(p) is str:
            s.append(p)
        else:
            r = p[0]
            if type(r) is str:
                s.append(r)
                l = l | p[1]
            else:
                q = _fv(p, None, None)
                s.append(q[0])
                l = l | q[1]
    return (''.join(s), l | _UV)


def _fcat(parts):
    s = ''
    l = _LIT
    for p in parts:
        s = s + p[0]
        l = (l | p[1])
    return (s, l | _UV)


# ---- builtins -------------------------------------------------------------------------------------------

def _lbls(vs):
    l = _LIT
    for v in vs:
        l = (l | _deep(v))
    return l


def _bi_len(x, _zp=_NEUTRAL):
    # The structure label only (docs/semantics.md, "Propagation"): every operation that can change a
    # container's length joins what decided it into the structure label (the structure invariant).
    r = x[0]
    if type(r) is list:
        return (len(r[1]), (x[1] | r[2]) | _UV)
    if _isfn(r):
        raise TypeError("object of type 'function' has no len()")
    return (len(r), x[1] | _UV)


def _bi_str(x=None, _zp=_NEUTRAL):
    if x is None:
        return ('', _LIT)
    return (str(_raw(x)), _deep(x) | _UV)


def _bi_int(x=None, base=None, _zp=_NEUTRAL):
    if x is None:
        return (0, _LIT)
    if base is None:
        return (int(_raw(x)), _deep(x) | _UV)
    return (int(_raw(x), base[0]), (_deep(x) | base[1]) | _UV)


def _bi_float(x=None, _zp=_NEUTRAL):
    if x is None:
        return (0.0, _LIT)
    return (float(_raw(x)), _deep(x) | _UV)


def _bi_bool(x=None, _zp=_NEUTRAL):
    if x is None:
        return (False, _LIT)
    return (_tr(x), _cl(x) | _UV)


def _bi_abs(x, _zp=_NEUTRAL):
    return (abs(_raw(x)), _deep(x) | _UV)


def _bi_round(x, n=None, _zp=_NEUTRAL):
    if n is None:
        return (round(_raw(x)), _deep(x) | _UV)
    return (round(_raw(x), n[0]), (_deep(x) | n[1]) | _UV)


def _bi_range(*args, _zp=_NEUTRAL):
    raws = [_raw(a) for a in args]
    l = _lbls(args) | _UV
    return _new(_KL, [(i, l) for i in range(*raws)], l)


def _rng(args):
    # The raw range for `for x in range(...)`, with the label every element and the structure carry.
    return (range(*[_raw(a) for a in args]), _lbls(args) | _UV)


def _arg_it(args, name):
    if len(args) == 1:
        return _elems(args[0]), _struct(args[0])
    if len(args) == 0:
        raise TypeError(name + ' expected at least 1 argument')
    return list(args), _LIT


def _keyed(es, key, pc, s):
    # Raw sort keys of each element, and the join of every label consulted. A key function is plan code run
    # once per element: it runs as the body of a loop over the container (docs/semantics.md, "Callbacks"),
    # so its pc joins the influence of the structure label `s`, and `es` must already carry it (`_elems`).
    if key is not None:
        pc = pc | _inf(s)
    l = _LIT
    ks = []
    for e in es:
        kv = e
        if key is not None:
            kv = _call(key, pc, e)
        ks.append(_raw(kv))
        l = (l | _deep(kv))
        l = (l | _deep(e))
    if key is not None:
        l = (l | key[1])
    return ks, l


def _bi_sorted(it, key=None, reverse=None, _zp=_NEUTRAL):
    es = _elems(it)
    ks, l = _keyed(es, key, _zp, _struct(it))
    rv = False
    if reverse is not None:
        rv = bool(_raw(reverse))
        l = (l | reverse[1])
    order = sorted(range(len(es)), key=lambda i: ks[i], reverse=rv)
    s = (_struct(it) | l)
    ch = _inf(s)
    return _new(_KL, [(es[i][0], (es[i][1] | ch)) for i in order], s)


def _minmax(args, key, default, pc, want_max, name):
    es, s = _arg_it(args, name)
    if len(es) == 0:
        if default is not None:
            return _jv(default, _inf(s))
        raise ValueError(name + '() arg is an empty sequence')
    ks, l = _keyed(es, key, pc, s)
    best = 0
    i = 1
    while i < len(es):
        if (want_max and ks[i] > ks[best]) or ((not want_max) and ks[i] < ks[best]):
            best = i
        i += 1
    e = es[best]
    return (e[0], (e[1] | _inf((s | l))))


def _bi_min(*args, key=None, default=None, _zp=_NEUTRAL):
    return _minmax(args, key, default, _zp, False, 'min')


def _bi_max(*args, key=None, default=None, _zp=_NEUTRAL):
    return _minmax(args, key, default, _zp, True, 'max')


def _bi_sum(it, start=None, _zp=_NEUTRAL):
    es = _elems(it)
    l = _struct(it)
    if start is not None and type(start[0]) is list:
        # Concatenation (`sum(lists, [])`) stays boxed, like `+`: summing raw lists would give a raw list that
        # reads as a box the plan built, with labels the plan wrote.
        total = start
        for e in es:
            total = _add(total, e)
        x = total[0]
        return _new(x[0], list(x[1]), x[2] | total[1] | l)
    total = 0
    if start is not None:
        total = _raw(start)
        l = (l | start[1])
    for e in es:
        total = total + _raw(e)
        l = (l | _deep(e))
    return (total, l | _UV)


def _bi_any(it, _zp=_NEUTRAL):
    es = _elems(it)
    r = False
    for e in es:
        if _tr(e):
            r = True
    return (r, (_struct(it) | _lbls(es)) | _UV)


def _bi_all(it, _zp=_NEUTRAL):
    es = _elems(it)
    r = True
    for e in es:
        if not _tr(e):
            r = False
    return (r, (_struct(it) | _lbls(es)) | _UV)


def _bi_enumerate(it, start=None, _zp=_NEUTRAL):
    es = _elems(it)
    s = _struct(it)
    n = 0
    if start is not None:
        n = _raw(start)
        s = (s | start[1])
    il = (_LIT | _inf(s))
    out = []
    for e in es:
        out.append(_new(_KT, [(n, il), e], s))
        n += 1
    return _new(_KL, out, s)


def _bi_zip(*its, _zp=_NEUTRAL):
    lists = [_elems(i) for i in its]
    s = _LIT
    for i in its:
        s = (s | _struct(i))
    n = min([len(x) for x in lists]) if len(lists) > 0 else 0
    out = []
    k = 0
    while k < n:
        out.append(_new(_KT, [x[k] for x in lists], s))
        k += 1
    return _new(_KL, out, s)


def _bi_map(f, *its, _zp=_NEUTRAL):
    lists = [_elems(i) for i in its]
    st = _LIT
    for i in its:
        st = (st | _struct(i))
    s = _inf(f[1]) | st
    n = min([len(x) for x in lists]) if len(lists) > 0 else 0
    out = []
    k = 0
    # The function runs as the body of a loop over the zipped iterables: its pc joins every structure, and
    # with several iterables each argument carries them all, as the unpacked target of `for a, b in zip(...)`.
    ch = _inf(st)
    pc = (_zp | ch)
    many = len(lists) > 1
    while k < n:
        if many:
            out.append(_callv(f, [(x[k][0], x[k][1] | ch) for x in lists], pc))
        else:
            out.append(_callv(f, [lists[0][k]], pc))
        k += 1
    return _new(_KL, out, s)


def _bi_filter(f, it, _zp=_NEUTRAL):
    es = _elems(it)
    s = _struct(it)
    pc = (_zp | _inf(s))
    out = []
    for e in es:
        if f[0] is None:
            t = e
        else:
            t = _callv(f, [e], pc)
        s = (s | _inf(_deep(t)))
        if _tr(t):
            out.append(e)
    return _new(_KL, out, s)


def _bi_reversed(x, _zp=_NEUTRAL):
    es = _elems(x)
    es.reverse()
    return _new(_KL, es, _struct(x))


def _bi_list(x=None, _zp=_NEUTRAL):
    if x is None:
        return _new(_KL, [], _LIT)
    return _new(_KL, _elems(x), _struct(x))


def _bi_tuple(x=None, _zp=_NEUTRAL):
    if x is None:
        return _new(_KT, [], _LIT)
    return _new(_KT, _elems(x), _struct(x))


def _bi_set(x=None, _zp=_NEUTRAL):
    if x is None:
        return _new(_KS, {}, _LIT)
    s = _struct(x)
    d = {}
    for e in _elems(x):
        rk = _key(e)
        if rk not in d:
            d[rk] = e
        s = (s | _deep(e))
    return _new(_KS, d, s)


def _bi_dict(_src=None, _zp=_NEUTRAL, **kw):
    s = _LIT
    d = {}
    if _src is not None:
        s = _struct(_src)
        if type(_src[0]) is list and _src[0][0] == _KD:
            for rk, kv in _src[0][1].items():
                d[rk] = kv
        else:
            for p in _elems(_src):
                pair = _unpack(p, 2)
                d[_key(pair[0])] = (pair[0], pair[1])
                s = (s | _deep(pair[0]))
    for k, v in kw.items():
        d[k] = ((k, _LIT), v)
    return _new(_KD, d, s)


def _bi_print(*args, sep=None, end=None, _zp=_NEUTRAL):
    # Output keeps its label (docs/semantics.md, "What is protected"): each print is one frame,
    # NUL label NUL length NUL text, which the host reads back into a labelled segment. Every print of a
    # plan goes through here, so the length framing cannot be forged by text inside it.
    sp = ' '
    en = '\n'
    lab = _zp
    if sep is not None:
        sp = _raw(sep)
        lab = lab | _deep(sep)
    if end is not None:
        en = _raw(end)
        lab = lab | _deep(end)
    if type(sp) is not str or type(en) is not str:
        # The error Monty's own print gives for a bad `sep` or `end`.
        print(sep=sp, end=en)
    for a in args:
        lab = lab | _deep(a)
    text = sp.join([str(_raw(a)) for a in args]) + en
    print('\x00', lab, '\x00', len(text), '\x00', text, sep='', end='')
    return (None, _LIT)


def _fn_len(x, _zp=_NEUTRAL):
    return _bi_len(x)


def _fn_str(x, _zp=_NEUTRAL):
    return _bi_str(x)


def _fn_int(x, _zp=_NEUTRAL):
    return _bi_int(x)


def _fn_float(x, _zp=_NEUTRAL):
    return _bi_float(x)


def _fn_abs(x, _zp=_NEUTRAL):
    return _bi_abs(x)


def _fn_bool(x, _zp=_NEUTRAL):
    return _bi_bool(x)


# ---- json and re ----------------------------------------------------------------------------------------

def _json_dumps(x, indent=None, sort_keys=None, _zp=_NEUTRAL):
    l = _deep(x)
    kw = {}
    if indent is not None:
        kw['indent'] = _raw(indent)
        l = (l | indent[1])
    if sort_keys is not None:
        kw['sort_keys'] = _raw(sort_keys)
        l = (l | sort_keys[1])
    return (json.dumps(_raw(x), **kw), l | _UV)


def _json_loads(s, _zp=_NEUTRAL):
    return _box(json.loads(_raw(s)), _deep(s) | _UV)


def _re_args(args):
    return [_raw(a) for a in args], _lbls(args) | _UV


def _re_search(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return (re.search(*r), l)


def _re_match(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return (re.match(*r), l)


def _re_fullmatch(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return (re.fullmatch(*r), l)


def _re_findall(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return _box(re.findall(*r), l)


def _re_sub(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return (re.sub(*r), l)


def _re_split(*args, _zp=_NEUTRAL):
    r, l = _re_args(args)
    return _box(re.split(*r), l)


# ---- methods --------------------------------------------------------------------------------------------

def _m_extend(c, it, pc, line):
    es = _elems(it)
    _mut(c, _struct(it), pc, line)
    for e in es:
        if _STRICT:
            e = (e[0], (e[1] | pc))
        c[0][1].append(e)


# Methods. One helper per catalogue row and receiver type (src/plan/catalogue.rs), named `_<type>_<method>`;
# build.rs generates the dispatch tables `_STR_M`, `_LIST_M`, ... from the catalogue and refuses a row
# without its helper. A `str` helper gets the raw receiver, the label of the result (every input joined,
# computed), the boxed positional arguments, their raw values and the raw keyword arguments (only those the
# row's `keywords` admit ever reach a helper: the compiler refuses the rest, so most ignore them). Every other
# helper gets the boxed receiver `c`, the boxed arguments and keywords, `pc` and the line.

def _str_lower(r, l, args, raws, rk):
    return (r.lower(*raws), l)


def _str_upper(r, l, args, raws, rk):
    return (r.upper(*raws), l)


def _str_strip(r, l, args, raws, rk):
    return (r.strip(*raws), l)


def _str_lstrip(r, l, args, raws, rk):
    return (r.lstrip(*raws), l)


def _str_rstrip(r, l, args, raws, rk):
    return (r.rstrip(*raws), l)


def _str_title(r, l, args, raws, rk):
    return (r.title(*raws), l)


def _str_replace(r, l, args, raws, rk):
    return (r.replace(*raws), l)


def _str_startswith(r, l, args, raws, rk):
    return (r.startswith(*raws), l)


def _str_endswith(r, l, args, raws, rk):
    return (r.endswith(*raws), l)


def _str_find(r, l, args, raws, rk):
    return (r.find(*raws), l)


def _str_count(r, l, args, raws, rk):
    return (r.count(*raws), l)


def _str_index(r, l, args, raws, rk):
    return (r.index(*raws), l)


def _str_zfill(r, l, args, raws, rk):
    return (r.zfill(*raws), l)


def _str_split(r, l, args, raws, rk):
    return _box(r.split(*raws, **rk), l)


def _str_rsplit(r, l, args, raws, rk):
    return _box(r.rsplit(*raws, **rk), l)


def _str_splitlines(r, l, args, raws, rk):
    return _box(r.splitlines(*raws), l)


def _str_partition(r, l, args, raws, rk):
    return _box(r.partition(*raws), l)


def _str_join(r, l, args, raws, rk):
    if len(args) != 1:
        raise TypeError('join() takes exactly one argument')
    parts = [_raw(e) for e in _elems(args[0])]
    return (r.join(parts), l)


def _str_format(r, l, args, raws, rk):
    return (r.format(*raws, **rk), l)


def _m_str(r, l, name, args, kw):
    f = _STR_M.get(name)
    if f is None:
        raise AttributeError("'str' object has no attribute '" + name + "'")
    raws = _NOARGS
    if len(args) > 0:
        raws = [_raw(a) for a in args]
        l = (l | _lbls(args))
    rk = _NOKW
    if len(kw) > 0:
        rk = {}
        for k, v in kw.items():
            l = (l | _deep(v))
            rk[k] = _raw(v)
    return f(r, l | _UV, args, raws, rk)


def _list_append(c, args, kw, pc, line):
    v = args[0]
    _mut(c, _LIT, pc, line)
    if _STRICT:
        v = (v[0], (v[1] | pc))
    c[0][1].append(v)
    return (None, _LIT)


def _list_extend(c, args, kw, pc, line):
    _m_extend(c, args[0], pc, line)
    return (None, _LIT)


def _list_insert(c, args, kw, pc, line):
    i = args[0]
    v = args[1]
    _mut(c, _inf(i[1]), pc, line)
    if _STRICT:
        v = (v[0], (v[1] | pc))
    c[0][1].insert(i[0], v)
    return (None, _LIT)


def _list_pop(c, args, kw, pc, line):
    items = c[0][1]
    il = _LIT
    if len(args) > 0:
        il = args[0][1]
        e = items[args[0][0]]
    else:
        e = items[-1]
    ch = _inf((_sl(c) | il))
    _mut(c, _inf(il), pc, line)
    if len(args) > 0:
        items.pop(args[0][0])
    else:
        items.pop()
    return (e[0], (e[1] | ch))


def _list_remove(c, args, kw, pc, line):
    items = c[0][1]
    v = args[0]
    _mut(c, (_deep(c) | _deep(v)), pc, line)
    rv = _raw(v)
    i = 0
    while i < len(items):
        if _raw(items[i]) == rv:
            items.pop(i)
            return (None, _LIT)
        i += 1
    raise ValueError('list.remove(x): x not in list')


def _list_index(c, args, kw, pc, line):
    items = c[0][1]
    rv = _raw(args[0])
    l = (_deep(c) | _deep(args[0])) | _UV
    i = 0
    while i < len(items):
        if _raw(items[i]) == rv:
            return (i, l)
        i += 1
    raise ValueError('value is not in list')


def _list_count(c, args, kw, pc, line):
    rv = _raw(args[0])
    n = 0
    for e in c[0][1]:
        if _raw(e) == rv:
            n += 1
    return (n, (_deep(c) | _deep(args[0])) | _UV)


def _tuple_index(c, args, kw, pc, line):
    return _list_index(c, args, kw, pc, line)


def _tuple_count(c, args, kw, pc, line):
    return _list_count(c, args, kw, pc, line)


def _list_sort(c, args, kw, pc, line):
    items = c[0][1]
    key = kw.get('key')
    rev = kw.get('reverse')
    # The key sees each element as a `for` loop over the list would: joined with the list's structure.
    ks, l = _keyed(items if key is None else _elems(c), key, pc, _sl(c))
    rv = False
    if rev is not None:
        rv = bool(_raw(rev))
        l = (l | rev[1])
    _mut(c, l, pc, line)
    order = sorted(range(len(items)), key=lambda i: ks[i], reverse=rv)
    new = [items[i] for i in order]
    items.clear()
    items.extend(new)
    return (None, _LIT)


def _list_reverse(c, args, kw, pc, line):
    _mut(c, _LIT, pc, line)
    c[0][1].reverse()
    return (None, _LIT)


def _list_copy(c, args, kw, pc, line):
    return _new(_KL, list(c[0][1]), _sl(c))


def _dict_get(c, args, kw, pc, line):
    d = c[0][1]
    k = args[0]
    ch = _inf((_sl(c) | k[1]))
    dl = (None, _LIT)
    if len(args) > 1:
        dl = args[1]
    rk = _key(k)
    if rk in d:
        e = d[rk][1]
        return (e[0], (e[1] | ch))
    return _jv(dl, ch)


def _dict_keys(c, args, kw, pc, line):
    ch = _inf(_sl(c))
    return _new(_KL, [(kv[0][0], (kv[0][1] | ch)) for kv in c[0][1].values()], _sl(c))


def _dict_values(c, args, kw, pc, line):
    ch = _inf(_sl(c))
    return _new(_KL, [(kv[1][0], (kv[1][1] | ch)) for kv in c[0][1].values()], _sl(c))


def _dict_items(c, args, kw, pc, line):
    s = _sl(c)
    ch = _inf(s)
    return _new(_KL, [_new(_KT, [(kv[0][0], (kv[0][1] | ch)), (kv[1][0], (kv[1][1] | ch))], s) for kv in c[0][1].values()], s)


def _dict_update(c, args, kw, pc, line):
    d = c[0][1]
    o = args[0]
    pairs = []
    if type(o[0]) is list and o[0][0] == _KD:
        ch = _inf(_sl(o))
        for kv in o[0][1].values():
            pairs.append(((kv[0][0], (kv[0][1] | ch)), (kv[1][0], (kv[1][1] | ch))))
    else:
        for p in _elems(o):
            pr = _unpack(p, 2)
            pairs.append((pr[0], pr[1]))
    extra = _struct(o)
    for p in pairs:
        extra = (extra | _deep(p[0]))
    _mut(c, extra, pc, line)
    for p in pairs:
        v = p[1]
        if _STRICT:
            v = (v[0], (v[1] | pc))
        d[_key(p[0])] = (p[0], v)
    return (None, _LIT)


def _dict_pop(c, args, kw, pc, line):
    d = c[0][1]
    k = args[0]
    ch = _inf((_sl(c) | k[1]))
    _mut(c, _deep(k), pc, line)
    rk = _key(k)
    if rk in d:
        e = d.pop(rk)[1]
        return (e[0], (e[1] | ch))
    if len(args) > 1:
        return _jv(args[1], ch)
    raise KeyError(rk)


def _dict_setdefault(c, args, kw, pc, line):
    d = c[0][1]
    k = args[0]
    v = (None, _LIT)
    if len(args) > 1:
        v = args[1]
    ch = _inf((_sl(c) | k[1]))
    # Whether the key was there decides the length: the key joins the structure either way (a raise only
    # when it was missing would itself tell whether it was).
    _mut(c, _deep(k), pc, line)
    rk = _key(k)
    if rk in d:
        e = d[rk][1]
        return (e[0], (e[1] | ch))
    if _STRICT:
        v = (v[0], (v[1] | pc))
    d[rk] = (k, v)
    return (v[0], (v[1] | ch))


def _dict_copy(c, args, kw, pc, line):
    nd = {}
    for rk, kv in c[0][1].items():
        nd[rk] = kv
    return _new(_KD, nd, _sl(c))


def _set_op(name, a, b):
    ob = _elems(b)
    s = ((_sl(a) | _struct(b)) | (_deep(a) | _lbls(ob)))
    da = a[0][1]
    keys_b = {}
    for e in ob:
        keys_b[_key(e)] = e
    out = {}
    if name == 'union':
        for rk, e in da.items():
            out[rk] = e
        for rk, e in keys_b.items():
            if rk not in out:
                out[rk] = e
    elif name == 'intersection':
        for rk, e in da.items():
            if rk in keys_b:
                out[rk] = e
    else:
        for rk, e in da.items():
            if rk not in keys_b:
                out[rk] = e
    ch = _inf(s)
    res = {}
    for rk, e in out.items():
        res[rk] = (e[0], (e[1] | ch))
    return _new(_KS, res, s)


def _set_add(c, args, kw, pc, line):
    d = c[0][1]
    v = args[0]
    _mut(c, _deep(v), pc, line)
    if _STRICT:
        v = (v[0], (v[1] | pc))
    rk = _key(v)
    if rk not in d:
        d[rk] = v
    return (None, _LIT)


def _set_drop(c, v, pc, line):
    # Removes `v` from the set; whether it was there (the removal's label is the element's).
    _mut(c, _deep(v), pc, line)
    rk = _key(v)
    d = c[0][1]
    if rk in d:
        d.pop(rk)
        return True
    return False


def _set_discard(c, args, kw, pc, line):
    _set_drop(c, args[0], pc, line)
    return (None, _LIT)


def _set_remove(c, args, kw, pc, line):
    if not _set_drop(c, args[0], pc, line):
        raise KeyError(_key(args[0]))
    return (None, _LIT)


def _set_union(c, args, kw, pc, line):
    return _set_op('union', c, args[0])


def _set_intersection(c, args, kw, pc, line):
    return _set_op('intersection', c, args[0])


def _set_difference(c, args, kw, pc, line):
    return _set_op('difference', c, args[0])


def _match_group(c, args, kw, pc, line):
    raws = [_raw(a) for a in args]
    return (c[0].group(*raws), (c[1] | _lbls(args)) | _UV)


# A fast path for `d.get(k)` with a key the compiler cannot pass raw; anything else goes through `_m`.
def _m_get(c, args, kw, pc, line):
    x = c[0]
    if type(x) is list and x[0] == _KD and (len(args) == 1 or len(args) == 2):
        k = args[0]
        r = k[0]
        t = type(r)
        if t is str or t is int:
            s = c[1]
            s2 = x[2]
            s = s | s2
            lk = k[1]
            ch = _inf(s | lk)
            d = x[1]
            if r in d:
                e = d[r][1]
            elif len(args) == 2:
                e = args[1]
            else:
                e = (None, _LIT)
            le = e[1]
            return (e[0], le | ch)
    return _m(c, 'get', args, kw, pc, line)


# `d.get(k, [])` (compiler/lean.rs): `_m_get(c, [k, _mk(_KL, [], pc)], ...)` with the default list made
# only where it is returned (`_mk` of no items: structure `_LIT`, joined with pc in STRICT).
def _mgl(c, k, pc, line):
    x = c[0]
    if type(x) is list and x[0] == _KD:
        r = k[0]
        t = type(r)
        if t is str or t is int:
            ch = c[1] | x[2] | k[1]
            ch = (ch | _UV) if ch & 1 else (ch & _NUV)
            kv = x[1].get(r)
            if kv is None:
                return ([_KL, [], (_LIT | pc) if _STRICT else _LIT], _LIT | ch)
            e = kv[1]
            return (e[0], e[1] | ch)
    return _m_get(c, [k, _mk(_KL, [], pc)], _NOKW, pc, line)


def _m(c, name, args, kw, pc, line):
    x = c[0]
    if type(x) is list:
        k = x[0]
        if k == _KL:
            t = _LIST_M
            tn = 'list'
        elif k == _KD:
            t = _DICT_M
            tn = 'dict'
        elif k == _KS:
            t = _SET_M
            tn = 'set'
        else:
            t = _TUPLE_M
            tn = 'tuple'
        f = t.get(name)
        if f is None:
            raise AttributeError("'" + tn + "' object has no attribute '" + name + "'")
        return f(c, args, kw, pc, line)
    if type(x) is str:
        return _m_str(x, c[1], name, args, kw)
    if x is not None and not _isfn(x) and type(x) is not int and type(x) is not float and type(x) is not bool:
        f = _MATCH_M.get(name)
        if f is not None:
            return f(c, args, kw, pc, line)
    raise AttributeError("object has no attribute '" + name + "'")


# Fast paths the compiler emits when it knows an argument is flat (str, int, float, bool or None), passed as
# raw value and label: no tuple or list is built for it. Each falls back to the general helper.
def _mg2(c, kr, kl, d, pc, line):
    # `c.get(k, default)` with a flat key (`c.get(k)` passes the default None): it is its own raw dict key.
    x = c[0]
    if type(x) is list and x[0] == _KD:
        ch = c[1] | x[2] | kl
        ch = (ch | _UV) if ch & 1 else (ch & _NUV)
        kv = x[1].get(kr)
        if kv is None:
            return (d[0], d[1] | ch)
        e = kv[1]
        return (e[0], e[1] | ch)
    return _m(c, 'get', [(kr, kl), d], _NOKW, pc, line)


def _gif(c, kr, kl):
    # `c[k]` with a flat key given raw (`_gi` for the rules): on a dict holding the key, a flat key is its
    # own raw dict key (an equal bool, int or float finds the same entry, as `_key` would). Everything
    # else (a list, a missing key's KeyError, other receivers) goes to `_gi`.
    x = c[0]
    if type(x) is list and x[0] == _KD:
        kv = x[1].get(kr)
        if kv is not None:
            ch = c[1] | x[2] | kl
            ch = (ch | _UV) if ch & 1 else (ch & _NUV)
            e = kv[1]
            return (e[0], e[1] | ch)
    return _gi(c, (kr, kl))


def _sif(c, kr, kl, v, pc, line):
    # `c[k] = v` on a dict with a flat key (`_si` for the rules).
    x = c[0]
    if type(x) is list and x[0] == _KD:
        s = x[2]
        if _STRICT and pc:
            if (s | pc | _UV) != (s | _UV):
                _violation(line)
            v = (v[0], v[1] | pc)
            s = s | pc
        x[1][kr] = ((kr, kl), v)
        x[2] = s | ((kl | _UV) if kl & 1 else kl)
        return
    _si(c, (kr, kl), v, pc, line)


def _mjoin(s, sl, c, pc, line):
    # `s.join(c)` with a flat separator given raw: a list or tuple of strings is read without copying it.
    # `str.join` itself tests that every element is a str (a TypeError otherwise, and nothing else), so the
    # general helper runs exactly where the elements are not all strings, as a per-element test would
    # decide; one loop per element fewer.
    x = c[0]
    if type(s) is str and type(x) is list and (x[0] == _KL or x[0] == _KT):
        items = x[1]
        l = sl | c[1] | x[2]
        for e in items:
            l = l | e[1]
        try:
            return (s.join([e[0] for e in items]), l | _UV)
        except TypeError:
            pass
    return _m((s, sl), 'join', [c], _NOKW, pc, line)


def _mapp(c, v, pc, line):
    # `c.append(v)`.
    x = c[0]
    if type(x) is list and x[0] == _KL:
        if _STRICT and pc != 0:
            _mut(c, _LIT, pc, line)
            v = (v[0], v[1] | pc)
        else:
            x[2] = x[2] | _UV
        x[1].append(v)
        return (None, _LIT)
    return _m(c, 'append', [v], _NOKW, pc, line)


def _addf(a, y, ly):
    # `a + y` with a flat right operand given raw.
    x = a[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float) and type(y) is tx:
        return (x + y, a[1] | ly | _UV)
    return _bin('+', a, (y, ly))


def _subf(a, y, ly):
    x = a[0]
    tx = type(x)
    if (tx is int or tx is float) and type(y) is tx:
        return (x - y, a[1] | ly | _UV)
    return _bin('-', a, (y, ly))


def _mulf(a, y, ly):
    x = a[0]
    tx = type(x)
    if (tx is int or tx is float) and type(y) is tx:
        return (x * y, a[1] | ly | _UV)
    return _bin('*', a, (y, ly))


# ---- fused idioms --------------------------------------------------------------------------------------
# One call where the unfused code makes two or three (compiler/fused.rs), with the same checks in the same
# order and the same labels; where its fast path does not apply, each makes exactly the unfused calls.

def _dinc(c, kr, kl, d, y, ly, pc, line):
    # `c[k] = c.get(k, d) + y` with a flat key and a flat `y`: `_mg2`, `_addf` and `_sif` in one.
    x = c[0]
    if type(x) is list and x[0] == _KD:
        s = x[2]
        ch = c[1] | s | kl
        ch = (ch | _UV) if ch & 1 else (ch & _NUV)
        kv = x[1].get(kr)
        e = d if kv is None else kv[1]
        a = e[0]
        t = type(a)
        if (t is int or t is str or t is float) and type(y) is t:
            r = a + y
            l = e[1] | ch | ly | _UV
        else:
            v = _bin('+', (a, e[1] | ch), (y, ly))
            r = v[0]
            l = v[1]
        # `_sif`: `c` is still a dict (nothing above runs plan code).
        if _STRICT and pc:
            if (s | pc | _UV) != (s | _UV):
                _violation(line)
            l = l | pc
            s = s | pc
        x[1][kr] = ((kr, kl), (r, l))
        x[2] = s | ((kl | _UV) if kl & 1 else kl)
        return
    _sif(c, kr, kl, _addf(_mg2(c, kr, kl, d, pc, line), y, ly), pc, line)


def _addp(a, b, pc):
    # `x = a + b` under a control context (STRICT): `_add`, then the assignment's join of pc.
    x = a[0]
    y = b[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float) and type(y) is tx:
        return (x + y, a[1] | b[1] | pc | _UV)
    v = _bin('+', a, b)
    return (v[0], v[1] | pc)


def _addfp(a, y, ly, pc):
    # `x = a + y` with a flat `y` given raw, under a control context (STRICT): `_addf`, then the join of pc.
    x = a[0]
    tx = type(x)
    if (tx is int or tx is str or tx is float) and type(y) is tx:
        return (x + y, a[1] | ly | pc | _UV)
    v = _bin('+', a, (y, ly))
    return (v[0], v[1] | pc)
