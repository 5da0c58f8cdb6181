"""What the framework hooks share.

Pickling. A framework keeps the hook's callbacks (bound methods) in the model's hook tables, so
pickling the model (``torch.save(model)``, ``pickle.dumps(block)``, ``copy.deepcopy(model)``)
pickles the hook, whose writer cannot travel. The framework hooks reduce to a ``DetachedHook`` instead: the copied or
loaded model keeps callbacks of the same names that do nothing, so it runs as without a hook and
saves nothing (the original model and its hook are unchanged).

smdebug's hook singleton (get_hook, set_hook, del_hook), one per process."""
import atexit
import sys
import weakref

import smd.hook as _core


class DetachedHook:
    """A stand-in for a hook in a pickled or copied model: every callback does nothing."""

    def __init__(self, kind=""):
        self._kind = kind

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _nothing

    def __reduce__(self):
        return (DetachedHook, (self._kind,))

    def __repr__(self):
        return f"<smd DetachedHook of a pickled or copied model ({self._kind}): saves nothing>"


def _nothing(*args, **kwargs):
    return None


def _no_callback():
    return _nothing


class Callback:
    """A hook's callback as the framework's hook table holds it: calls ``getattr(hook, name)``.
    Pickled or deep-copied (with the model that holds it) it becomes a function that does nothing:
    a bound method would be rebuilt by ``copy.deepcopy`` around the hook's own code."""

    __slots__ = ("_fn",)

    def __init__(self, hook, name):
        self._fn = getattr(hook, name)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __reduce__(self):
        return (_no_callback, ())

    def __deepcopy__(self, memo):
        return _nothing


def detached(kind):
    """A new DetachedHook (the unpickling function named by the framework hooks' __reduce__)."""
    return DetachedHook(kind)


class OwnedCollection(_core.Collection):
    """A framework hook's collection: remembers its hook (weakly) for the framework's add_* calls
    (add_module_tensors, add_block_tensors). A detached one (made with smdebug's constructor)
    gets its hook from ``hook.add_collection``."""

    def __init__(self, name, include_regex=None, tensor_names=None, reduction_config=None,
                 save_config=None, save_histogram=True, *, _handle=None, _state=None, _hook=None):
        super().__init__(name, include_regex, tensor_names, reduction_config, save_config,
                         save_histogram, _handle=_handle, _state=_state)
        self._owner = None
        if _hook is not None:
            self.adopt(_hook)

    def adopt(self, hook):
        self._owner = weakref.ref(hook)

    def owner(self):
        """The hook this collection belongs to, or None (detached, or its hook is gone)."""
        return self._owner() if self._owner is not None else None


# -- smdebug's hook singleton (get_hook / set_hook / del_hook of every framework module) ----------
# One per process, shared by the frameworks, as smdebug's. A hook registers itself when it is made
# and is then held weakly (a hook nobody holds closes itself); set_hook, and get_hook when it
# creates the hook from the JSON configuration, hold it strongly, as smdebug does.
_weak = None
_strong = None


def _close_at_exit(ref):
    hook = ref()
    if hook is not None:
        try:
            hook.close()
        except Exception as e:  # noqa: BLE001 - the program is ending: say it, do not raise
            sys.stderr.write(f"smd: closing the hook at interpreter exit failed: {e}\n")


def hook_created(hook):
    """Called by a framework hook's constructor: the newest hook is the singleton, and it is
    closed at interpreter exit if the program did not close it (as smdebug's hooks are); the
    exit handler holds it weakly, so a hook dropped earlier is freed (and closed) then."""
    global _weak, _strong
    _weak, _strong = weakref.ref(hook), None
    atexit.register(_close_at_exit, weakref.ref(hook))


def get_hook(hook_class, json_config_path=None, create_if_not_exists=False):
    """The singleton hook if it is a ``hook_class`` (any hook for None); else, with
    ``create_if_not_exists``, a ``hook_class`` made from the JSON configuration
    (``json_config_path``, $SMDEBUG_CONFIG_FILE_PATH, or SageMaker's file), or None when there is
    no such file."""
    global _strong
    hook = _strong if _strong is not None else (_weak() if _weak is not None else None)
    if hook is not None and (hook_class is None or isinstance(hook, hook_class)):
        return hook
    if not create_if_not_exists:
        return None if hook_class is not None else hook
    if hook_class is None:
        raise ValueError("get_hook: cannot create a hook without knowing which kind")
    try:
        hook = hook_class.create_from_json_file(json_config_path)
    except FileNotFoundError:
        return None
    set_hook(hook)
    return hook


def set_hook(custom_hook):
    """Makes ``custom_hook`` (an smd hook) the singleton, held until ``del_hook``."""
    global _weak, _strong
    if not isinstance(custom_hook, _core.Hook):
        raise TypeError(f"set_hook takes an smd hook, not {type(custom_hook).__name__}")
    _weak, _strong = weakref.ref(custom_hook), custom_hook


def del_hook():
    """Forgets the singleton hook (the hook itself stays open)."""
    global _weak, _strong
    _weak, _strong = None, None
