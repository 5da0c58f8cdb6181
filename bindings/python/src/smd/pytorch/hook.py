"""smdebug's PyTorch hook over smd's writer: ``smd.pytorch.Hook``.

``register_module(model)`` adds a forward pre-hook to the model (each forward pass of the model
starts a step). On the steps where something is due, forward hooks are attached to the submodules
(their outputs, and inputs on request) and a gradient hook to the parameters that require a
gradient, each only where a collection the hook saves can hold its tensors. Tensor names are
smdebug's:
``<Model>_<param>`` for parameters (weights/biases, saved when the step starts, i.e. before that
step's update), ``gradient/<Model>_<param>`` for gradients, ``<module>_output_<i>`` and
``<module>_input_<i>`` for module tensors, ``<Loss>_output_0`` for a loss module registered with
``register_loss``.
"""
import re
import weakref

import numpy as np
import torch

import smd.hook as _core
from smd import smdc as _smd
import smd._framework as _fw
from smd.collection_keys import CollectionKeys
from smd.pytorch import _device

# torch dtype -> smd dtype, by the C library's names of its dtypes ("float32" is torch.float32;
# torch's unsigned types past uint8 exist in recent releases only). The numpy dtype of the view
# passed to smd follows from it; bfloat16 has no numpy dtype and travels as its 16-bit pattern.
_DTYPES = {}
for _code in (getattr(_smd, _n) for _n in dir(_smd) if _n.startswith("SMD_DTYPE_")):
    _torch_dtype = getattr(torch, _smd.smd_dtype_name(_code) or "", None)
    if isinstance(_torch_dtype, torch.dtype):
        _DTYPES[_torch_dtype] = _code

INPUT_SUFFIX = "_input_"
OUTPUT_SUFFIX = "_output_"
GRADIENT_PREFIX = "gradient/"

# module -> weakref of the hook it is registered with. Kept here, not as an attribute of the module:
# a model must pickle (torch.save(model)), and a weak reference does not.
_OWNER = weakref.WeakKeyDictionary()


def get_hook(json_config_path=None, create_if_not_exists=False):
    """The hook created last in this process (or given to ``set_hook``); with
    ``create_if_not_exists``, one from the JSON configuration (``json_config_path`` or
    $SMDEBUG_CONFIG_FILE_PATH) if there is none yet, or None without such a file."""
    return _fw.get_hook(Hook, json_config_path, create_if_not_exists)


set_hook = _fw.set_hook
del_hook = _fw.del_hook


class _Plan:
    """Which of a hook's step hooks can save anything under its collections as they are (one
    collections version, smd_hook_collections_version): the modules whose numbered outputs
    (or inputs, where they are written) can belong to a saved collection, the parameters whose
    values can, by registered model, and the parameters whose gradients can. The others are left
    alone: by default only the losses collection is saved, and then the loss module is the only
    module hooked, and no parameter's gradient. smd_hook_may_save errs towards "can"."""
    __slots__ = ("version", "modules", "params", "gradients")

    def __init__(self, hook, version):
        may, h = _smd.smd_hook_may_save, hook._hook
        self.version = version
        self.modules = []
        for mid, (name, sub) in hook._modules.items():
            inputs = name in hook._inputs_wanted or hook._save_all or mid not in hook._loss_modules
            if may(h, name + OUTPUT_SUFFIX, True) or (inputs and may(h, name + INPUT_SUFFIX, True)):
                self.modules.append(sub)
        self.params = {id(m): [(n, p) for n, p in params if may(h, n, False)]
                       for m, params in hook._roots}
        self.gradients = [(GRADIENT_PREFIX + n, p) for _, params in hook._roots for n, p in params
                          if may(h, GRADIENT_PREFIX + n, False)]


def _host_view(name, tensor):
    """(smd dtype, shape, a buffer over the elements) of a torch tensor: a CPU tensor's own
    memory when it is contiguous (no copy), otherwise a contiguous copy; a tensor on another
    device (GPU) is copied to host memory first."""
    t = tensor.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")
    if t.is_sparse or t.layout != torch.strided:
        t = t.to_dense()
    code = _DTYPES.get(t.dtype)
    if code is None:
        raise TypeError(f"tensor {name!r}: torch dtype {t.dtype} cannot be saved")
    if not t.is_contiguous():
        t = t.contiguous()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if t.dtype == torch.bfloat16:
        buf = t.view(torch.int16).numpy()
    else:
        buf = t.numpy()
    return code, list(t.shape), buf


class Collection(_fw.OwnedCollection):
    """smdebug's PyTorch collection: adds ``add_module_tensors``. ``Collection(name, include_regex,
    tensor_names, reduction_config, save_config, save_histogram)`` makes a detached one, as
    smdebug's, for ``hook.add_collection``."""

    def add_module_tensors(self, module, inputs=False, outputs=True):
        """Adds the inputs and/or outputs of ``module`` (a module registered with the hook, or a
        submodule of one) to this collection; effective from the next step."""
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"add_module_tensors takes a torch.nn.Module, not {type(module).__name__}")
        hook = self.owner()
        if hook is None:
            raise RuntimeError(f"collection {self.name!r} belongs to no open hook: add it with "
                               "hook.add_collection first")
        hook._module_requests.append((self.name, module, bool(inputs), bool(outputs)))


class Hook(_core.Hook):
    """smdebug's ``smdebug.pytorch.Hook``: same constructor arguments, ``register_module``,
    ``register_loss``, ``record_tensor_value``, ``save_tensor``/``save_scalar`` with torch
    tensors, ``set_mode``, ``get_collection(...).add_module_tensors``, ``close``."""

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, _handle=None,
                 **smd_options):
        if _handle is None and out_dir is None:
            raise TypeError("smd.pytorch.Hook needs an out_dir (or use Hook.create_from_json_file())")
        super().__init__(out_dir, export_tensorboard, tensorboard_dir, dry_run, reduction_config,
                         save_config, include_regex, include_collections, save_all, include_workers,
                         _handle=_handle, **smd_options)
        self._save_all = bool(save_all)
        self._modules = {}          # id(module) -> (module name, module), every registered one
        self._roots = []            # modules registered with register_module
        self._loss_modules = set()  # id() of modules registered with register_loss
        self._inputs_wanted = set() # names of modules whose inputs some collection asked for
        self._module_requests = []  # (collection, module, inputs, outputs) not yet applied
        self._handles = []          # torch hook handles, removed by close()
        self._step_handles = []     # forward and gradient hooks, attached while steps are due
        self._grad_hooks = 0        # gradient hooks among them
        self._hooked = False        # whether _step_handles are attached
        self._plan = None           # _Plan: what the step hooks can save, for a collections version
        self._due = False           # whether anything is due at the current step
        self._counts = {}           # "<module>_output_" -> next index in this step
        self._closed = False
        # Tensors on a GPU: reductions computed there, values staged through pinned buffers.
        self._device = _device.DeviceCapture(self._hook, smd_options.get("memory_budget"))
        _fw.hook_created(self)

    @classmethod
    def _framework_options(cls, options):
        # An initialized torch.distributed process group names the worker (smdebug's
        # worker_<rank>); otherwise smd reads RANK/WORLD_SIZE and the other launchers' variables.
        dist = getattr(torch, "distributed", None)
        if dist is not None and dist.is_available() and dist.is_initialized():
            _smd.smd_hook_options_set_worker(options, f"worker_{dist.get_rank()}")
            _smd.smd_hook_options_set_num_workers(options, dist.get_world_size())

    # -- registration ------------------------------------------------------------------------
    def register_module(self, module):
        """Hooks ``module`` (the model) and all its submodules. Every forward pass of ``module``
        starts a new step."""
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"register_module takes a torch.nn.Module, not {type(module).__name__}")
        root_name = module._get_name()
        if id(module) in self._modules:
            raise ValueError(f"module {root_name} is already registered with this hook")
        for name, sub in module.named_modules():
            if id(sub) in self._modules:
                raise ValueError(f"submodule {name or root_name!r} of {root_name} is already "
                                 f"registered with this hook (as {self._modules[id(sub)][0]!r})")
        for name, sub in module.named_modules():
            other = _OWNER.get(sub)
            other = other() if other is not None else None
            if other is not None and other is not self and not other._closed:
                raise ValueError(f"module {name or root_name!r} of {root_name} is registered with "
                                 "another open smd hook: close that hook first (two hooks would "
                                 "each count steps on the same model)")
        params = [(root_name + "_" + n, p) for n, p in module.named_parameters()]
        if not params:
            raise ValueError(f"module {root_name} has no parameters: register the model that owns "
                             "them (weights, biases and gradients come from its parameters); "
                             "register a loss module with register_loss")
        for name, sub in module.named_modules():
            self._modules[id(sub)] = (name if sub is not module else root_name, sub)
            _OWNER[sub] = weakref.ref(self)
        self._roots.append((module, params))
        self._handles.append(module.register_forward_pre_hook(_fw.Callback(self, "_forward_pre_hook")))
        self._plan = self._hooked = None  # planned and attached again at the next step

    register_hook = register_module  # smdebug's older name

    def register_loss(self, loss_module):
        """Saves the output of a loss module (e.g. ``nn.CrossEntropyLoss()``) in ``losses`` as
        ``<LossClass>_output_0``."""
        if not isinstance(loss_module, torch.nn.modules.loss._Loss):
            raise TypeError("register_loss takes a loss module (a subclass of "
                            f"torch.nn.modules.loss._Loss), not {type(loss_module).__name__}")
        if id(loss_module) in self._modules:
            raise ValueError(f"loss module {loss_module._get_name()} is already registered with this hook")
        self._modules[id(loss_module)] = (loss_module._get_name(), loss_module)
        self._loss_modules.add(id(loss_module))
        self._plan = self._hooked = None

    def get_collection(self, name, create=True):
        c = super().get_collection(name, create)
        return Collection(c.name, _handle=c._c, _state=c._state, _hook=self)

    def add_collection(self, collection):
        super().add_collection(collection)
        if isinstance(collection, Collection):
            collection.adopt(self)

    # -- torch hooks -------------------------------------------------------------------------
    def _apply_module_requests(self):
        pending = []
        for coll, module, inputs, outputs in self._module_requests:
            entry = self._modules.get(id(module))
            if entry is None:
                pending.append((coll, module, inputs, outputs))
                continue
            c = super().get_collection(coll)
            if inputs:
                c.include("^" + re.escape(entry[0] + INPUT_SUFFIX))
                self._inputs_wanted.add(entry[0])
            if outputs:
                c.include("^" + re.escape(entry[0] + OUTPUT_SUFFIX))
        if pending:
            names = ", ".join(f"{m._get_name()} (collection {c!r})" for c, m, _, _ in pending)
            self._module_requests = []
            raise ValueError(f"add_module_tensors: {names} is not a module registered with "
                             "register_module or register_loss, nor a submodule of one")
        self._module_requests = []

    def _forward_pre_hook(self, module, inputs):
        if self._module_requests:
            self._apply_module_requests()
        self.begin_step()
        self._counts.clear()
        self._due = _smd.smd_hook_any_due(self._hook)
        # The forward hooks of the submodules and the parameters' gradient hooks are attached only
        # while steps are due, and only where they can save something (the plan): a module with
        # hooks takes torch's slower call path, and a step that saves nothing then costs this
        # pre-hook alone.
        if self._due:
            version = _smd.smd_hook_collections_version(self._hook)
            if self._plan is None or self._plan.version != version:  # rare: attached again
                self._plan, self._hooked = _Plan(self, version), None
        if self._due != self._hooked:
            self._attach_step_hooks(self._due)
        if self._due:
            # (This runs while a GPU waits for the step's first kernel: one C call a parameter
            # that can be saved and is not due now, nothing else.)
            is_due, h = _smd.smd_hook_is_due, self._hook
            params = self._plan.params.get(id(module))
            if params:
                # Copies of parameters are ordered before the optimizer's update when the
                # backward pass ends (a gradient hook tells), else at once.
                with self._device.batch(order=not self._grad_hooks):
                    for pname, p in params:
                        if is_due(h, pname):
                            self._save_due(pname, p)

    def _attach_step_hooks(self, on):
        for h in self._step_handles:
            h.remove()
        if self._step_handles:
            self._forget_empty_gradient_hooks()
        self._step_handles = []
        self._grad_hooks = 0  # gradient hooks attached
        if on:
            forward_hook = _fw.Callback(self, "_forward_hook")
            for sub in self._plan.modules:
                self._step_handles.append(sub.register_forward_hook(forward_hook))
            for gname, p in self._plan.gradients:
                if p.requires_grad:
                    self._step_handles.append(p.register_hook(self._gradient_hook(gname)))
                    self._grad_hooks += 1
        self._hooked = on

    def _forget_empty_gradient_hooks(self):
        # A parameter keeps an empty hook dictionary after its last hook is removed, and autograd
        # still calls into Python for it at every backward pass (~2 us a parameter); None drops
        # it. Only when empty: hooks of others stay.
        for _, params in self._roots:
            for _, p in params:
                if p.requires_grad and getattr(p, "_backward_hooks", None) is not None \
                        and len(p._backward_hooks) == 0:
                    p._backward_hooks = None

    def _forward_hook(self, module, inputs, outputs):
        if not self._due:
            return
        name = self._modules[id(module)][0]
        if (name in self._inputs_wanted or self._save_all
                or id(module) not in self._loss_modules):
            self._write(name, INPUT_SUFFIX, inputs)
        self._write(name, OUTPUT_SUFFIX, outputs)

    def _gradient_hook(self, name):
        # torch does not pickle a parameter's gradient hooks; marked so it drops this one silently
        @torch.utils.hooks.unserializable_hook
        def hook(grad):
            if self._due and grad is not None:
                self._device.backward_started()
                self._offer(name, grad, backward=True)
        return hook

    def _write(self, module_name, suffix, value):
        key = module_name + suffix
        idx = self._counts.get(key, 0)
        self._counts[key] = self._write_nested(key, value, idx)

    def _write_nested(self, key, value, idx):
        if isinstance(value, torch.Tensor):
            self._offer(key + str(idx), value)
            return idx + 1
        if isinstance(value, (tuple, list)):
            for v in value:
                idx = self._write_nested(key, v, idx)
        return idx

    def _offer(self, name, tensor, backward=False):
        """Saves a torch tensor if a collection it belongs to is due now: a tensor on a GPU
        through the device paths (smd/pytorch/_device.py), others here."""
        if _smd.smd_hook_is_due(self._hook, name):
            self._save_due(name, tensor, backward)

    def _save_due(self, name, tensor, backward=False):
        if self._device.offer(name, tensor, _DTYPES.get(tensor.dtype), backward):
            return
        dtype, shape, buf = _host_view(name, tensor)
        _smd.smd_hook_save_tensor(self._hook, name, dtype, shape, buf, [])

    # -- saving ------------------------------------------------------------------------------
    def record_tensor_value(self, tensor_name, tensor_value):
        """Saves a tensor computed outside any module (e.g. ``F.mse_loss(...)``) as
        ``<tensor_name>_output_0``, like a module output."""
        if not isinstance(tensor_name, str):
            raise TypeError(f"tensor_name must be a str, not {type(tensor_name).__name__}")
        if not isinstance(tensor_value, torch.Tensor):
            raise TypeError(f"record_tensor_value({tensor_name!r}): the value must be a torch.Tensor, "
                            f"not {type(tensor_value).__name__}")
        if self._due:
            self._write(tensor_name, OUTPUT_SUFFIX, tensor_value)

    def save_tensor(self, tensor_name, tensor_value, collections_to_write=CollectionKeys.DEFAULT):
        """As smd.Hook.save_tensor; also takes torch tensors (CPU ones without a copy)."""
        if not isinstance(tensor_value, torch.Tensor):
            return super().save_tensor(tensor_name, tensor_value, collections_to_write)
        if not isinstance(tensor_name, str):
            raise TypeError(f"tensor_name must be a str, not {type(tensor_name).__name__}")
        colls = [collections_to_write] if isinstance(collections_to_write, str) else list(collections_to_write)
        dtype, shape, buf = _host_view(tensor_name, tensor_value)
        _smd.smd_hook_save_tensor(self._hook, tensor_name, dtype, shape, buf, colls)

    def save_scalar(self, name, value, sm_metric=False, timestamp=None):
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise TypeError(f"save_scalar({name!r}): a tensor of {value.numel()} elements is not a scalar")
            # kept as a numpy value of its own dtype (a float32 loss is saved as float32, as
            # smdebug's hook saves it; bfloat16 as float32)
            value = value.detach().cpu()
        return super().save_scalar(name, value, sm_metric, timestamp)

    def begin_step(self):
        # What the device paths hold of the ending step is saved into it first.
        self._device.flush()
        super().begin_step()

    def set_mode(self, mode):
        self._device.flush()
        super().set_mode(mode)

    def end_step(self):
        # (as begin_step: the step's files are completed with what the device paths hold)
        self._device.flush()
        super().end_step()

    def flush(self):
        self._device.flush()
        super().flush()

    def __reduce_ex__(self, protocol):
        # A registered model holds the hook's callbacks, so torch.save(model) and
        # copy.deepcopy(model) reach the hook: it travels as a stand-in whose callbacks do nothing
        # (the loaded or copied model runs without saving; this hook is unchanged).
        return (_fw.detached, ("smd.pytorch.Hook",))

    # -- end ---------------------------------------------------------------------------------
    def close(self):
        """Removes the torch hooks, then closes the writer (see smd.Hook.close)."""
        if self._closed:
            super().close()
            return
        try:
            self._device.flush()
        finally:  # an error saving what the device paths held still closes the hook
            self._closed = True
            for h in self._handles + self._step_handles:
                h.remove()
            if self._step_handles:
                self._forget_empty_gradient_hooks()
            self._handles, self._step_handles = [], []
            super().close()
