"""z = f(x, y) from a case-file expression, with exact first and second derivatives.

The expression is parsed with Python's ``ast`` into a small whitelist (numbers, ``x``, ``y``,
``pi``, ``e``, named constants, ``+ - * / **``, unary minus and the functions of ``_FUNCS``)
and evaluated on numpy arrays in second-order forward-mode automatic differentiation: every
intermediate value u carries (u, u_x, u_y, u_xx, u_xy, u_yy). The chain rule for a function
phi(u) is

    d phi = phi'(u) du,    d2 phi = phi'(u) d2u + phi''(u) du (x) du,

and the product rule d2(uw) = u d2w + w d2u + du (x) dw + dw (x) du. Derivatives are therefore
exact to round-off (no finite differences), which Eq. (4) of Gallotti et al. 2020 needs for the
normal acceleration on the surface.
"""

from __future__ import annotations

import ast
from typing import Callable

import numpy as np

from solver.errors import InputError


class Jet:
    """A value with its gradient and Hessian (xx, xy, yy) w.r.t. (x, y), all numpy arrays."""

    __slots__ = ("v", "x", "y", "xx", "xy", "yy")

    def __init__(self, v, x, y, xx, xy, yy):
        self.v, self.x, self.y, self.xx, self.xy, self.yy = v, x, y, xx, xy, yy

    @staticmethod
    def constant(c: float, like: np.ndarray) -> "Jet":
        z = np.zeros_like(like)
        return Jet(np.full_like(like, c), z, z, z, z, z)

    def apply(self, f: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> "Jet":
        """phi(self) given phi, phi' and phi'' evaluated at self.v (the chain rule above)."""
        return Jet(f, d1 * self.x, d1 * self.y,
                   d1 * self.xx + d2 * self.x * self.x,
                   d1 * self.xy + d2 * self.x * self.y,
                   d1 * self.yy + d2 * self.y * self.y)

    def __add__(self, o: "Jet") -> "Jet":
        return Jet(self.v + o.v, self.x + o.x, self.y + o.y,
                   self.xx + o.xx, self.xy + o.xy, self.yy + o.yy)

    def __sub__(self, o: "Jet") -> "Jet":
        return Jet(self.v - o.v, self.x - o.x, self.y - o.y,
                   self.xx - o.xx, self.xy - o.xy, self.yy - o.yy)

    def __neg__(self) -> "Jet":
        return Jet(-self.v, -self.x, -self.y, -self.xx, -self.xy, -self.yy)

    def __mul__(self, o: "Jet") -> "Jet":
        return Jet(self.v * o.v, self.v * o.x + o.v * self.x, self.v * o.y + o.v * self.y,
                   self.v * o.xx + o.v * self.xx + 2.0 * self.x * o.x,
                   self.v * o.xy + o.v * self.xy + self.x * o.y + self.y * o.x,
                   self.v * o.yy + o.v * self.yy + 2.0 * self.y * o.y)

    def reciprocal(self) -> "Jet":
        r = 1.0 / self.v
        return self.apply(r, -r * r, 2.0 * r * r * r)

    def __truediv__(self, o: "Jet") -> "Jet":
        return self * o.reciprocal()

    def power(self, c: float) -> "Jet":
        """self ** c for a constant exponent c."""
        return self.apply(self.v ** c, c * self.v ** (c - 1.0), c * (c - 1.0) * self.v ** (c - 2.0))


def _sin(u: Jet) -> Jet:
    return u.apply(np.sin(u.v), np.cos(u.v), -np.sin(u.v))


def _cos(u: Jet) -> Jet:
    return u.apply(np.cos(u.v), -np.sin(u.v), -np.cos(u.v))


def _tan(u: Jet) -> Jet:
    t = np.tan(u.v)
    return u.apply(t, 1.0 + t * t, 2.0 * t * (1.0 + t * t))


def _exp(u: Jet) -> Jet:
    e = np.exp(u.v)
    return u.apply(e, e, e)


def _log(u: Jet) -> Jet:
    return u.apply(np.log(u.v), 1.0 / u.v, -1.0 / (u.v * u.v))


def _sqrt(u: Jet) -> Jet:
    s = np.sqrt(u.v)
    return u.apply(s, 0.5 / s, -0.25 / (s * u.v))


def _tanh(u: Jet) -> Jet:
    t = np.tanh(u.v)
    return u.apply(t, 1.0 - t * t, -2.0 * t * (1.0 - t * t))


def _arctan(u: Jet) -> Jet:
    d = 1.0 / (1.0 + u.v * u.v)
    return u.apply(np.arctan(u.v), d, -2.0 * u.v * d * d)


def _sinh(u: Jet) -> Jet:
    return u.apply(np.sinh(u.v), np.cosh(u.v), np.sinh(u.v))


def _cosh(u: Jet) -> Jet:
    return u.apply(np.cosh(u.v), np.sinh(u.v), np.cosh(u.v))


_FUNCS: dict[str, Callable[[Jet], Jet]] = {
    "sin": _sin, "cos": _cos, "tan": _tan, "exp": _exp, "log": _log, "sqrt": _sqrt,
    "tanh": _tanh, "arctan": _arctan, "atan": _arctan, "sinh": _sinh, "cosh": _cosh}


def _number(node: ast.AST) -> float | None:
    """The value of a constant (possibly negated) number node, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        if inner is not None:
            return -inner if isinstance(node.op, ast.USub) else inner
    return None


class _Compiler:
    """Turns the whitelisted AST into a closure ``(x_jet, y_jet) -> Jet``."""

    def __init__(self, names: dict[str, float], where: str):
        self.names = names
        self.where = where

    def fail(self, message: str) -> None:
        raise InputError(self.where, message)

    def build(self, node: ast.AST):
        if isinstance(node, ast.Expression):
            return self.build(node.body)
        value = _number(node)
        if value is not None:
            return lambda X, Y: Jet.constant(value, X.v)
        if isinstance(node, ast.Name):
            if node.id == "x":
                return lambda X, Y: X
            if node.id == "y":
                return lambda X, Y: Y
            if node.id in self.names:
                c = self.names[node.id]
                return lambda X, Y: Jet.constant(c, X.v)
            self.fail(f"unknown name {node.id!r} (use x, y, pi, e or surface.constants)")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.build(node.operand)
            return (lambda X, Y: -inner(X, Y)) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS:
                self.fail(f"unsupported function (allowed: {', '.join(sorted(_FUNCS))})")
            if len(node.args) != 1 or node.keywords:
                self.fail(f"{node.func.id}() takes exactly one argument")
            fn, arg = _FUNCS[node.func.id], self.build(node.args[0])
            return lambda X, Y: fn(arg(X, Y))
        self.fail(f"unsupported syntax {type(node).__name__}")

    def binop(self, node: ast.BinOp):
        left = self.build(node.left)
        if isinstance(node.op, ast.Pow):
            exponent = _number(node.right)
            if exponent is not None:
                return lambda X, Y: left(X, Y).power(exponent)
            right = self.build(node.right)
            return lambda X, Y: _exp(right(X, Y) * _log(left(X, Y)))
        right = self.build(node.right)
        ops = {ast.Add: Jet.__add__, ast.Sub: Jet.__sub__, ast.Mult: Jet.__mul__,
               ast.Div: Jet.__truediv__}
        op = ops.get(type(node.op))
        if op is None:
            self.fail(f"unsupported operator {type(node.op).__name__}")
        return lambda X, Y: op(left(X, Y), right(X, Y))


MAX_NODES = 1000
"""Most terms, operators and calls of an expression (a surface of a few hundred terms is
generated, not written; a longer one would only slow every evaluation)."""

MAX_NESTING = 64
"""Deepest nesting of an expression's operations (the compiler and the evaluation recurse
once per level)."""


def _check_size(tree: ast.AST, where: str) -> None:
    """At most MAX_NODES nodes, nested at most MAX_NESTING deep (walked without recursion)."""
    pending, nodes = [(tree, 0)], 0
    while pending:
        node, depth = pending.pop()
        nodes += 1
        if depth > MAX_NESTING:
            raise InputError(where, f"operations nested more than {MAX_NESTING} deep")
        if nodes > MAX_NODES:
            raise InputError(where, f"more than {MAX_NODES} terms, operators and calls")
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def compile_expression(text: str, constants: dict[str, float], where: str):
    """Parse ``text`` once; return ``f(x, y) -> (f, f_x, f_y, f_xx, f_xy, f_yy)`` on arrays.
    An expression beyond MAX_NODES or MAX_NESTING is refused."""
    if not text.strip():
        raise InputError(where, "empty expression")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise InputError(where, f"not a valid expression ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise InputError(where, f"operations nested more than {MAX_NESTING} deep") from None
    _check_size(tree, where)
    names = {"pi": float(np.pi), "e": float(np.e)}
    for key in constants:
        if key in ("x", "y") or key in _FUNCS:
            raise InputError(where, f"constant name {key!r} is reserved")
    names.update({k: float(v) for k, v in constants.items()})
    closure = _Compiler(names, where).build(tree)

    def evaluate(x: np.ndarray, y: np.ndarray):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        zero, one = np.zeros_like(x), np.ones_like(x)
        out = closure(Jet(x, one, zero, zero, zero, zero), Jet(y, zero, one, zero, zero, zero))
        return tuple(np.broadcast_to(a, x.shape).astype(float)
                     for a in (out.v, out.x, out.y, out.xx, out.xy, out.yy))

    return evaluate
