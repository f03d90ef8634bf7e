"""Calls: the parts of a call (callee, receiver, positional and keyword arguments), which
argument binds to which parameter of a local function, and what a call runs as a module.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rules._analysis.callgraph import Functions
from torchlint.rules._analysis.index import Index
from torchlint.rules._analysis.names import dotted, last_name


def method_name(call: cst.Call) -> str | None:
    """`step` for `x.step(...)`; None when the callee is not an attribute."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    """`a.b` for `a.b.step(...)`."""
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def callee_name(call: cst.Call) -> str | None:
    """The last name of the callee: `step` for `opt.step()`, `train` for `train(x)`."""
    return last_name(call.func)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def first_argument(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value a call gives its first parameter, called `name`: by keyword or first position
    (`model.train(False)`, `model.train(mode=False)`)."""
    given = keyword(call, name)
    if given is not None:
        return given.value
    args = positional(call)
    return args[0].value if args else None


def is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def same_expr(a: cst.BaseExpression | None, b: cst.BaseExpression | None) -> bool:
    """Two name/attribute chains that spell the same object (`self.model`, `model`)."""
    if a is None or b is None:
        return False
    da, db = dotted(a), dotted(b)
    return da is not None and da == db


def positional_parameters(func: cst.FunctionDef, *, bound_self: bool) -> list[cst.Param]:
    """The parameters that a call's positional arguments bind to, in order; without the first
    one when the call binds it (the `self` or `cls` of a method called through an attribute)."""
    params = [*func.params.posonly_params, *func.params.params]
    return params[1:] if bound_self and params else params


def binds_self(funcs: Functions, func: cst.FunctionDef, call: cst.Call) -> bool:
    """`call` runs the method `func` through an attribute (`self.f(x)`, `obj.f(x)`), which binds
    its first parameter."""
    is_static = any(last_name(d.decorator) == "staticmethod" for d in func.decorators)
    return id(func) in funcs.class_of and not is_static and isinstance(call.func, cst.Attribute)


def bind_arguments(funcs: Functions, func: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """Parameter name -> argument expression, for the parameters `call` binds plainly (up to the
    first `*args`, whose length is unknown, and by keyword)."""
    params = positional_parameters(func, bound_self=binds_self(funcs, func, call))
    bound: dict[str, cst.BaseExpression] = {}
    keyword_params = {p.name.value for p in (*params, *func.params.kwonly_params)}
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        if arg.keyword is None and position < len(params):
            bound[params[position].name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keyword_params:
            bound[arg.keyword.value] = arg.value
    return bound


def parameter_names(func: cst.FunctionDef) -> set[str]:
    p = func.params
    names = {q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def called_module(call: cst.Call) -> cst.BaseExpression | None:
    """What a call runs as a module: `model` in `model(x)` and `model.forward(x)`, `self.encoder`
    in `self.encoder(x)`. None for method calls such as `batch.values()`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func
    if isinstance(func, cst.Attribute):
        if func.attr.value == "forward" and dotted(func.value):
            return func.value
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return func
    return None


def call_taking(idx: Index, use: cst.CSTNode) -> cst.Call | None:
    """The call that `use` is passed to directly as an argument (`f(loader)`, `f(data=loader)`)."""
    parent = idx.parent(use)
    call = idx.parent(parent) if isinstance(parent, cst.Arg) else None
    return call if isinstance(call, cst.Call) else None


def move_statement(statement: cst.Expr) -> tuple[str, cst.Call] | None:
    """The name and the call of `x.to(device)` or `x.cuda()` written as a statement of its
    own, whose result nothing keeps: a module moves itself, a tensor only returns a copy."""
    call = statement.value
    if not isinstance(call, cst.Call) or method_name(call) not in ("to", "cuda"):
        return None
    owner = receiver(call)
    return (owner.value, call) if isinstance(owner, cst.Name) else None
