#!/usr/bin/env python3
"""Writes the cases of the C API's NULL and enum sweep (ctest capi.null_sweep; the program is
tests/abi/null_sweep.c, which includes what this writes) from capi/api.json:

    null_sweep.py API_JSON OUT.inc

For every function returning smd_error *:
  - the valid call, every argument valid: it must succeed and write every output;
  - for every pointer parameter (handles, strings, arrays, callbacks, outputs), the same call with
    that one argument NULL: SMD_E_INVALID_ARGUMENT whose message names the parameter, and no output
    written; or, for a parameter the function's comment lets be NULL (`optional` below), success;
  - for every enum parameter, each value of BAD_ENUM_VALUES: SMD_E_INVALID_ARGUMENT naming it;
  - the recipe's `variants`, e.g. an array NULL with its count 0, which the comment allows.
For every other function (getters, _free functions): each pointer argument NULL, and each enum
argument out of range, expecting no crash and the value the function's comment gives (`null` and
`enum` below: a C condition on the result r; None for a function returning nothing).

Valid arguments are made from their type: handles that calls change are made fresh for each case
(a hook with step 0 open, options, configurations: fx_* of null_sweep.c), the others are shared
(the trial the program writes first, a tensor of it, a value, a collection); outputs are variables
filled with a sentinel byte. What the type does not tell (a name the trial has, an array and its
count) the function's recipe in RECIPES says. A function with no recipe gets a case that fails:
whoever adds a function to the API decides there which of its pointers may be NULL. (Only the _free
functions need none: smd/smd.h says every one accepts NULL.)
"""
import json
import pathlib
import sys

# Values out of range for each enum parameter type.
BAD_ENUM_VALUES = {
    "smd_mode": ["99", "-1"],
    "smd_dtype": ["99", "-1"],
    "smd_include_workers": ["99", "-1"],
    "smd_code": ["99", "-1"],
}

SCALARS = {
    "bool": "false",
    "int32_t": "0",
    "int64_t": "0",
    "size_t": "0",
    "double": "0",
    "smd_mode": "SMD_MODE_TRAIN",
    "smd_dtype": "SMD_DTYPE_FLOAT32",
    "smd_include_workers": "SMD_INCLUDE_WORKERS_ONE",
    "smd_code": "SMD_E_INTERNAL",
}

CALLBACKS = {
    "smd_rule_invoke_fn": "fx_rule_invoke",
    "smd_rule_required_tensors_fn": "fx_rule_required",
    "smd_rule_finding_fn": "fx_on_finding",
    "smd_rule_progress_fn": "fx_on_progress",
}


def fresh(decl, expr, cleanup):
    """An argument made by C statements (decl), passed as expr and released by cleanup; each is
    a template in which {v} is the argument's variable."""
    return {"decl": decl if isinstance(decl, list) else [decl], "expr": expr,
            "cleanup": cleanup if isinstance(cleanup, list) else [cleanup]}


def made(handle):
    """A handle made by null_sweep.c's fx_<name without smd_>() and freed by <handle>_free."""
    return fresh(f"{handle} *{{v}} = fx_{handle[4:]}();", "{v}", f"{handle}_free({{v}});")


# Handles made fresh for every case (the calls change them, or end them).
FRESH = {h: made(h) for h in ("smd_hook", "smd_save_config", "smd_reduction_config", "smd_hook_options",
                              "smd_storage_options", "smd_trial_options", "smd_tensor_filter", "smd_rule",
                              "smd_rule_invoke_options", "smd_tensorboard_writer", "smd_error")}
FRESH["smd_collection"] = fresh(["smd_hook *{v}_hook = fx_hook();",
                                 "smd_collection *{v} = fx_collection({v}_hook);"], "{v}",
                                ["smd_collection_free({v});", "smd_hook_free({v}_hook);"])

# Handles shared by every case (no call of the sweep changes them for good).
SHARED = {
    "smd_trial": "fx.trial",
    "smd_tensor": "fx.tensor",
    "smd_value": "fx.value",
    "smd_collection_info": "fx.info",
    "smd_rule_context": "ctx",  # only inside sw_in_context (the recipe's `context`)
}

# Arguments known by their name wherever they appear.
BY_NAME = {
    "collections": "fx_collections",
    "n_collections": "1",
    "worker": '"worker_0"',
}

# How an output is released after a success, by its type; outputs of other types need nothing.
OUT_FREE = {
    "smd_strarray *": "smd_strarray_free(&{v});",
    "char **": "smd_free({v});",
    "int64_t **": "smd_free({v});",
    "size_t **": "smd_free({v});",
    "smd_mode **": "smd_free({v});",
    "smd_value ***": "smd_value_array_free({v}, a_n_out);",
    "DLManagedTensorVersioned **": "{v}->deleter({v});",
}

NAME = '"sweep"'

# Per function: what the types do not tell.
#   args      {param: C expression, or fresh(...)}: the valid argument
#   optional  [param]: NULL is allowed (the function's comment says so): the call must succeed
#   names     {param: word}: the word the error message must contain instead of the name
#   variants  [(label, {param: expression}, "ok" | "invalid:<word>")]: further cases (an array NULL
#             with its count 0, an array holding a NULL)
#   consumed  [param]: the call takes the argument over, failing or not
#   keep      [param]: made even where NULL is passed instead (its making has an effect the call needs)
#   context   "invoke" | "required": run inside that callback of a rule (for a live context)
#   no_valid_call  why the function cannot succeed here: only its required NULLs are checked
#   out_init  {param: C statement}: sets an output before the call (an in/out struct)
#   after     C statements at the end of every case (`label` names the case)
#   extra     a C function of null_sweep.c called after the cases
#   null / enum  (functions not returning smd_error *): {param: C condition on r, or None}
RECIPES = {
    # ---- common.h
    "smd_error_code": dict(null={"err": "r == SMD_OK"}),
    "smd_error_message": dict(null={"err": "r != NULL && r[0] == '\\0'"}),
    "smd_code_name": dict(enum={"code": "r == NULL"}),
    "smd_dtype_size": dict(enum={"dtype": "r == 0"}),
    "smd_dtype_name": dict(enum={"dtype": "r == NULL"}),
    "smd_dtype_from_name": dict(args={"name": '"float32"'}),
    "smd_mode_name": dict(enum={"mode": "r == NULL"}),
    "smd_mode_from_name": dict(args={"name": '"train"'}),
    "smd_version": dict(null={"major_out": None, "minor_out": None, "patch_out": None}),
    "smd_version_string": dict(),
    # ---- storage.h: strings NULL (or "") unset a setting
    "smd_storage_options_create": dict(),
    "smd_storage_options_set_s3_endpoint": dict(args={"endpoint": '"http://localhost:9000"'},
                                                optional=["endpoint"]),
    "smd_storage_options_set_s3_region": dict(optional=["region"]),
    "smd_storage_options_set_s3_profile": dict(optional=["profile"]),
    "smd_storage_options_set_s3_addressing_style": dict(args={"style": '"path"'}, optional=["style"]),
    "smd_storage_options_set_s3_ca_bundle": dict(optional=["path"]),
    "smd_storage_options_set_s3_credentials": dict(
        args={"access_key_id": '"AKIDSWEEP"', "secret_access_key": '"sweep-secret"',
              "session_token": '"sweep-token"'},
        optional=["session_token"],
        # the message names the pair in words, as the bindings' messages do (one key needs the other)
        names={"access_key_id": "access key id", "secret_access_key": "secret access key"},
        variants=[("every key NULL", {"access_key_id": "NULL", "secret_access_key": "NULL",
                                      "session_token": "NULL"}, "ok")]),
    "smd_storage_options_set_s3_retries": dict(),
    # ---- hook.h: configurations
    "smd_save_config_create": dict(),
    "smd_save_config_clone": dict(),
    "smd_save_config_set": dict(
        args={"save_interval": "1", "end_step": "-1", "save_steps": "fx_steps", "n_save_steps": "1"},
        variants=[("save_steps NULL, n_save_steps 0", {"save_steps": "NULL", "n_save_steps": "0"}, "ok")]),
    "smd_save_config_set_interval": dict(args={"save_interval": "1"}),
    "smd_save_config_unset": dict(),
    "smd_save_config_should_save": dict(),
    "smd_save_config_settings": dict(),
    "smd_reduction_config_create": dict(),
    "smd_reduction_config_parse": dict(args={"reductions": '"min,abs_mean"'}),
    "smd_reduction_config_clone": dict(),
    "smd_reduction_config_add": dict(args={"name": '"max"'}),
    "smd_reduction_config_set_save_raw_tensor": dict(),
    "smd_reduction_config_set_save_shape": dict(),
    "smd_reduction_config_to_string": dict(),
    # ---- hook.h: options
    "smd_hook_options_create": dict(),
    "smd_hook_options_set_save_config": dict(),
    "smd_hook_options_set_reduction_config": dict(optional=["config"]),
    "smd_hook_options_add_include_regex": dict(),
    "smd_hook_options_add_include_collection": dict(),
    "smd_hook_options_set_save_all": dict(),
    "smd_hook_options_set_include_workers": dict(names={"which": "include_workers"}),
    "smd_hook_options_set_worker": dict(),
    "smd_hook_options_set_num_workers": dict(args={"num_workers": "1"}),
    "smd_hook_options_set_dry_run": dict(),
    "smd_hook_options_set_real_payload_crc": dict(),
    "smd_hook_options_set_keep_colon_index": dict(),
    "smd_hook_options_set_wall_time_base": dict(),
    "smd_hook_options_set_memory_budget": dict(args={"bytes": "1024"}),
    "smd_hook_options_set_max_pending_steps": dict(),
    "smd_hook_options_set_write_end_marker": dict(),
    "smd_hook_options_set_fsync": dict(),
    "smd_hook_options_set_export_tensorboard": dict(),
    "smd_hook_options_set_tensorboard_dir": dict(args={"dir": 'fx_dir("tensorboard")'}, optional=["dir"]),
    "smd_hook_options_set_storage": dict(optional=["storage"]),
    # ---- hook.h: the hook
    "smd_hook_create": dict(args={"out_dir": 'fx_dir("out")'}, optional=["options"]),
    # (fx_json_file also makes the file $SMDEBUG_CONFIG_FILE_PATH, what a NULL json_path reads)
    "smd_hook_create_from_json_file": dict(args={"json_path": "fx_json_file()"},
                                           optional=["json_path", "options"], keep=["json_path"]),
    "smd_hook_create_from_json": dict(
        args={"json": fresh("const char *{v} = fx_json_text();", "{v}", []), "len": "strlen(a_json)"},
        optional=["options"]),
    "smd_hook_close": dict(),
    "smd_hook_flush": dict(),
    "smd_hook_set_mode": dict(),
    "smd_hook_begin_step": dict(),
    "smd_hook_end_step": dict(),
    "smd_hook_global_step": dict(null={"hook": "r == -1"}),
    "smd_hook_mode": dict(null={"hook": "r == SMD_MODE_GLOBAL"}),
    "smd_hook_mode_step": dict(null={"hook": "r == -1"}),
    "smd_hook_worker": dict(null={"hook": "r == NULL"}),
    "smd_hook_is_due": dict(null={"hook": "!r", "name": "!r"}),
    "smd_hook_any_due": dict(null={"hook": "!r"}),
    "smd_hook_may_save": dict(null={"hook": "!r", "name": "!r"}),
    "smd_hook_collections_version": dict(null={"hook": "r == 0"}),
    "smd_hook_stop_requested": dict(),
    "smd_hook_save_tensor": dict(
        args={"name": '"sweep/t"', "shape": "fx_shape", "ndim": "1", "data": "fx_data",
              "nbytes": "sizeof fx_data"},
        variants=[("shape NULL, ndim 0", {"shape": "NULL", "ndim": "0", "nbytes": "sizeof fx_data[0]"}, "ok"),
                  ("data NULL, nbytes 0", {"data": "NULL", "nbytes": "0", "shape": "fx_empty_shape"}, "ok"),
                  ("collections NULL, n_collections 0", {"collections": "NULL", "n_collections": "0"}, "ok"),
                  ("collections[1] NULL", {"collections": "fx_collections_with_null", "n_collections": "2"},
                   "invalid:collection")]),
    "smd_hook_save_dlpack": dict(
        args={"name": '"sweep/t"', "tensor": fresh("DLTensor {v} = fx_dltensor();", "&{v}", [])},
        variants=[("collections NULL, n_collections 0", {"collections": "NULL", "n_collections": "0"}, "ok"),
                  ("collections[1] NULL", {"collections": "fx_collections_with_null", "n_collections": "2"},
                   "invalid:collection")]),
    "smd_hook_save_dlpack_managed": dict(
        args={"name": '"sweep/t"',
              "tensor": fresh("DLManagedTensorVersioned *{v} = fx_managed();", "{v}", "{v}->deleter({v});")},
        consumed=["tensor"], after="fx_managed_settled(label);",
        variants=[("collections NULL, n_collections 0", {"collections": "NULL", "n_collections": "0"}, "ok"),
                  ("collections[1] NULL", {"collections": "fx_collections_with_null", "n_collections": "2"},
                   "invalid:collection")]),
    "smd_hook_save_strings": dict(
        args={"name": '"sweep/s"', "strings": "fx_strings", "lens": "fx_lens", "n": "2"},
        optional=["lens"],
        variants=[("strings NULL, n 0", {"strings": "NULL", "n": "0"}, "ok"),
                  ("strings[1] NULL", {"strings": "fx_strings_with_null"}, "invalid:string"),
                  ("collections NULL, n_collections 0", {"collections": "NULL", "n_collections": "0"}, "ok"),
                  ("collections[1] NULL", {"collections": "fx_collections_with_null", "n_collections": "2"},
                   "invalid:collection")]),
    "smd_hook_save_scalar": dict(),
    "smd_hook_save_scalar_typed": dict(
        args={"dtype": "SMD_DTYPE_FLOAT64", "value": "&fx_double", "nbytes": "sizeof fx_double"}),
    "smd_hook_save_scalar_timestamped": dict(
        args={"dtype": "SMD_DTYPE_FLOAT64", "value": "&fx_double", "nbytes": "sizeof fx_double"}),
    "smd_hook_writer_stats": dict(out_init={"out": "{v}.struct_size = sizeof {v};"}),
    "smd_hook_get_collection": dict(),
    "smd_hook_collection_names": dict(),
    "smd_hook_include_collection": dict(),
    "smd_hook_make_due": dict(),
    "smd_collection_name": dict(null={"collection": "r == NULL"}),
    "smd_collection_add_include_regex": dict(),
    "smd_collection_clear_include_regex": dict(),
    "smd_collection_add_tensor_name": dict(),
    "smd_collection_set_save_config": dict(optional=["config"]),
    "smd_collection_set_reduction_config": dict(optional=["config"]),
    "smd_collection_set_save_histogram": dict(),
    "smd_collection_tensor_names": dict(),
    "smd_reduction_names": dict(),
    "smd_histogram_bucket_edges": dict(null={"n_out": "r != NULL"}),
    "smd_hook_due_reductions": dict(args={"name": '"sweep/t"'}),
    "smd_hook_save_reductions": dict(
        args={"hook": fresh("smd_hook *{v} = fx_hook_reductions();", "{v}", "smd_hook_free({v});"),
              "name": '"sweep/r"', "shape": "fx_shape", "ndim": "1", "values": "fx_reductions",
              "n_values": "2", "histogram": "&fx_histogram"},
        optional=["histogram"],
        variants=[("shape NULL, ndim 0", {"shape": "NULL", "ndim": "0"}, "ok"),
                  ("collections NULL, n_collections 0", {"collections": "NULL", "n_collections": "0"}, "ok"),
                  ("collections[1] NULL", {"collections": "fx_collections_with_null", "n_collections": "2"},
                   "invalid:collection")]),
    # ---- trial.h
    "smd_trial_options_create": dict(),
    "smd_trial_options_set_range_steps": dict(args={"begin": "0", "end": "10"}),
    "smd_trial_options_set_auto_refresh": dict(),
    "smd_trial_options_set_collection_wait_ms": dict(),
    "smd_trial_options_set_cache_bytes": dict(),
    "smd_trial_options_set_storage": dict(optional=["storage"]),
    "smd_trial_open": dict(args={"path": "fx.trial_dir"}, optional=["options"]),
    "smd_s3_uploads_in_progress": dict(args={"uri": '"s3://smd-null-sweep/prefix"'},
                                       optional=["storage"], no_valid_call="it needs an S3 server"),
    "smd_trial_path": dict(null={"trial": "r == NULL"}),
    "smd_trial_refresh": dict(),
    "smd_trial_auto_refresh": dict(null={"trial": "!r"}),
    "smd_trial_refresh_scope_create": dict(),
    "smd_trial_warnings": dict(),
    "smd_trial_has_ended": dict(),
    "smd_trial_num_workers": dict(null={"trial": "r == 0"}),
    "smd_trial_loaded_all_steps": dict(null={"trial": "!r"}),
    "smd_trial_last_complete_step": dict(null={"trial": "r == -1"}),
    "smd_trial_index_cursor": dict(),
    "smd_trial_steps": dict(),
    "smd_trial_modes": dict(),
    "smd_trial_mode": dict(),
    "smd_trial_mode_step": dict(),
    "smd_trial_global_step": dict(),
    "smd_trial_workers": dict(),
    "smd_trial_has_passed_step": dict(),
    "smd_trial_wait_for_steps": dict(
        args={"steps": "fx_steps", "n": "1"},
        variants=[("steps NULL, n 0", {"steps": "NULL", "n": "0"}, "ok")]),
    "smd_tensor_filter_create": dict(),
    "smd_tensor_filter_set_step": dict(),
    "smd_tensor_filter_set_mode": dict(),
    "smd_tensor_filter_add_include_regex": dict(),
    "smd_tensor_filter_set_collection": dict(),
    "smd_trial_tensor_names": dict(optional=["filter"]),
    "smd_trial_has_tensor": dict(args={"name": '"sweep/w"'}),
    "smd_trial_tensor": dict(args={"name": '"sweep/w"'}),
    "smd_trial_collection_names": dict(),
    "smd_trial_collection": dict(),
    "smd_collection_info_name": dict(null={"info": "r == NULL"}),
    "smd_collection_info_include_regex": dict(),
    "smd_collection_info_tensor_names": dict(),
    "smd_collection_info_reductions": dict(null={"info": "r == NULL"}),
    "smd_collection_info_save_raw_tensor": dict(null={"info": "!r"}),
    "smd_collection_info_save_shape": dict(null={"info": "!r"}),
    "smd_collection_info_save_histogram": dict(null={"info": "!r"}),
    "smd_collection_info_save_config": dict(),
    # ---- rules.h
    "smd_rule_create": dict(
        args={"others": "fx.trials", "n_others": "1"}, optional=["required"],
        variants=[("others NULL, n_others 0", {"others": "NULL", "n_others": "0"}, "ok"),
                  ("others[0] NULL", {"others": "fx_null_trial"}, "invalid:trial")]),
    "smd_rule_context_rule_name": dict(null={"ctx": "r == NULL"}),
    "smd_rule_context_trial_count": dict(null={"ctx": "r == 0"}),
    "smd_rule_context_trial": dict(null={"ctx": "r == NULL"}),
    "smd_rule_context_report": dict(context="invoke", args={"tensor": '"sweep/w"'}, optional=["tensor"]),
    "smd_rule_context_require_tensor": dict(
        context="required", args={"name": '"sweep/w"', "steps": "fx_steps", "n_steps": "1"},
        variants=[("steps NULL, n_steps 0", {"steps": "NULL", "n_steps": "0"}, "ok")]),
    "smd_rule_context_end_rule": dict(null={"ctx": None}),
    "smd_rule_context_fail": dict(context="invoke", consumed=["err"],
                                  null={"ctx": "r == 1", "err": "r == 0"}),
    "smd_rule_context_fail_with": dict(context="invoke", null={"ctx": "r == 1", "message": "r == 1"},
                                       enum={"code": "r == 1"}, extra="sw_fail_with_unknown_codes"),
    "smd_code_skips_rule_step": dict(enum={"code": "!r"}),
    "smd_rule_create_builtin": dict(
        args={"name": '"VanishingGradient"', "others": "fx.trials", "n_others": "0", "keys": "fx_keys",
              "values": "fx_values", "n_params": "1"},
        optional=["others"],
        variants=[("others NULL, n_others 1", {"others": "NULL", "n_others": "1"}, "invalid:others"),
                  ("others[0] NULL", {"others": "fx_null_trial", "n_others": "1"}, "invalid:trial"),
                  ("keys[0] NULL", {"keys": "fx_null_string"}, "invalid:parameter"),
                  ("values[0] NULL", {"values": "fx_null_string"}, "invalid:value"),
                  ("keys and values NULL, n_params 0",
                   {"keys": "NULL", "values": "NULL", "n_params": "0"}, "ok")]),
    "smd_rule_builtin_names": dict(),
    "smd_rule_builtin_params": dict(args={"name": '"VanishingGradient"'}),
    "smd_rule_builtin_param_default": dict(args={"rule": '"VanishingGradient"', "param": '"threshold"'},
                                           null={"rule": "r == NULL", "param": "r == NULL"}),
    "smd_rule_builtin_param_help": dict(args={"rule": '"VanishingGradient"', "param": '"threshold"'},
                                        null={"rule": "r == NULL", "param": "r == NULL"}),
    "smd_rule_builtin_summary": dict(null={"name": "r == NULL"}),
    "smd_rule_name": dict(null={"rule": "r == NULL"}),
    "smd_rule_stop_training": dict(null={"rule": "!r"}),
    "smd_rule_set_stop_training": dict(),
    "smd_rule_finding_rule": dict(null={"finding": "r == NULL"}),
    "smd_rule_finding_step": dict(null={"finding": "r == -1"}),
    "smd_rule_finding_tensor": dict(null={"finding": "r == NULL"}),
    "smd_rule_finding_trial": dict(null={"finding": "r == 0"}),
    "smd_rule_finding_message": dict(null={"finding": "r == NULL"}),
    "smd_rule_finding_line": dict(null={"finding": "r == NULL"}),
    "smd_rule_findings_count": dict(null={"rule": "r == 0"}),
    "smd_rule_findings_at": dict(null={"rule": "r == NULL"}),
    "smd_rule_findings_clear": dict(null={"rule": None}),
    "smd_rule_steps_evaluated": dict(null={"rule": "r == 0"}),
    "smd_rule_steps_skipped": dict(null={"rule": "r == 0"}),
    "smd_rule_conditions_met": dict(null={"rule": "r == 0"}),
    "smd_rule_last_step": dict(null={"rule": "r == -1"}),
    "smd_rule_end_reason": dict(null={"rule": "r == SMD_RULE_END_NONE"}),
    "smd_rule_failed_step": dict(null={"rule": "r == -1"}),
    "smd_rule_invoke_options_create": dict(),
    "smd_rule_invoke_options_set_finding_callback": dict(optional=["fn"]),
    "smd_rule_invoke_options_set_progress_callback": dict(optional=["fn"]),
    "smd_rule_invoke_options_set_stop_training": dict(),
    "smd_rule_invoke_options_set_stop_at_first": dict(),
    "smd_rule_invoke_options_set_collect_findings": dict(),
    "smd_rule_invoke_options_set_message_file": dict(args={"path": 'fx_dir("messages")'}, optional=["path"]),
    "smd_rule_invoke_options_set_wait_timeout_ms": dict(),
    "smd_rule_invoke_options_set_wait_slice_ms": dict(args={"slice_ms": "1"}),
    "smd_rule_invoke": dict(args={"end_step": "1"}, optional=["options"]),
    "smd_rule_invoke_many": dict(
        args={"rules": fresh(["smd_rule *{v}_rule = fx_rule();", "smd_rule *const {v}[1] = {{{v}_rule}};"],
                             "{v}", "smd_rule_free({v}_rule);"),
              "n": "1", "end_step": "1"},
        optional=["options"],
        variants=[("rules[0] NULL", {"rules": "fx_null_rule"}, "invalid:rule")]),
    # ---- tensor.h
    "smd_tensor_name": dict(null={"tensor": "r == NULL"}),
    "smd_tensor_original_name": dict(),
    "smd_tensor_steps": dict(),
    "smd_tensor_value": dict(optional=["worker"]),
    "smd_tensor_values": dict(optional=["worker"]),
    "smd_tensor_shape": dict(optional=["worker"]),
    "smd_tensor_value_info": dict(optional=["worker"]),
    "smd_tensor_shapes": dict(optional=["worker"]),
    "smd_tensor_reduction_value": dict(args={"reduction": '"min"'}, optional=["worker"]),
    "smd_tensor_reduction_names": dict(optional=["worker"]),
    "smd_tensor_reduction_values": dict(optional=["worker"]),
    "smd_tensor_workers": dict(),
    "smd_tensor_prev_steps": dict(),
    "smd_value_ref": dict(null={"value": "r == NULL"}),
    "smd_value_dtype": dict(null={"value": "r == SMD_DTYPE_INVALID"}),
    "smd_value_ndim": dict(null={"value": "r == 0"}),
    "smd_value_shape": dict(null={"value": "r == NULL"}),
    "smd_value_count": dict(null={"value": "r == 0"}),
    "smd_value_nbytes": dict(null={"value": "r == 0"}),
    "smd_value_data": dict(null={"value": "r == NULL"}),
    "smd_value_string": dict(args={"value": "fx.string_value"}, optional=["len_out"]),
    "smd_value_double_at": dict(),
    "smd_value_to_dlpack": dict(),
    # ---- tensorboard.h
    "smd_tensorboard_writer_create": dict(args={"dir": 'fx_dir("tensorboard")'}, optional=["storage"]),
    "smd_tensorboard_writer_add_scalar": dict(),
    "smd_tensorboard_writer_add_histogram": dict(args={"data": "fx_data", "nbytes": "sizeof fx_data"},
                                                 optional=["written_out"]),
    "smd_tensorboard_writer_flush": dict(),
    "smd_tensorboard_writer_close": dict(),
}

RECIPE_KEYS = {"args", "optional", "names", "variants", "consumed", "keep", "context", "no_valid_call",
               "out_init", "after", "extra", "null", "enum"}


def is_out(p):
    return p["name"] == "out" or p["name"].endswith("_out")


def is_pointer(p):
    return "*" in p["type"] or p["type"] in CALLBACKS


def bad_enum(p, value):
    return {p["name"]: f"({p['type']}){value}"}


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Problem(Exception):
    pass


class Function:
    def __init__(self, f, recipe, opaque_free, enums):
        self.f = f
        self.name = f["name"]
        self.params = f["params"]
        self.r = recipe
        self.opaque_free = opaque_free
        self.fallible = f["returns"] == "smd_error *"
        names = {p["name"] for p in self.params}
        for key in recipe:
            if key not in RECIPE_KEYS:
                raise Problem(f"unknown recipe key {key!r}")
        for key in ("args", "names", "out_init", "null", "enum"):
            for p in recipe.get(key, {}):
                if p not in names:
                    raise Problem(f"recipe {key} names {p!r}, which is not a parameter")
        for key in ("optional", "consumed", "keep"):
            for p in recipe.get(key, []):
                if p not in names:
                    raise Problem(f"recipe {key} names {p!r}, which is not a parameter")
        for _, over, _ in recipe.get("variants", []):
            for p in over:
                if p not in names:
                    raise Problem(f"a variant names {p!r}, which is not a parameter")
        for p in self.params:
            if p["type"] in enums and p["type"] not in BAD_ENUM_VALUES:
                raise Problem(f"{p['name']} is an {p['type']}: give that enum its values out of range "
                              "in BAD_ENUM_VALUES")

    # -- arguments
    def arg(self, p):
        """(decl lines, expr, cleanup lines) of the valid input argument p."""
        v = "a_" + p["name"]
        given = self.r.get("args", {}).get(p["name"])
        if given is None:
            given = BY_NAME.get(p["name"])
        if given is None:
            t = p["type"].replace("const ", "").strip()
            base = t[:-1].strip() if t.endswith("*") and t.count("*") == 1 else None
            if p["type"] in SCALARS:
                given = SCALARS[p["type"]]
            elif p["type"] in CALLBACKS:
                given = CALLBACKS[p["type"]]
            elif p["type"] == "const char *":
                given = NAME
            elif p["type"] == "void *":
                given = "(void *)&fx"
            elif base in FRESH:
                given = FRESH[base]
            elif base in SHARED:
                given = SHARED[base]
            else:
                raise Problem(f"no valid {p['type']} {p['name']}: give one in the recipe's args")
        if isinstance(given, dict):
            return ([d.format(v=v) for d in given["decl"]], given["expr"].format(v=v),
                    [c.format(v=v) for c in given["cleanup"]])
        return ([f"{p['type']} {v} = {given};" if not p['type'].endswith('*') else
                 f"{p['type']}{v} = {given};"], v, [])

    def referenced(self, v):
        """Whether another argument's recipe uses variable v (then v is made even when NULL is
        passed instead)."""
        texts = [x if isinstance(x, str) else " ".join(x["decl"]) + " " + x["expr"]
                 for x in self.r.get("args", {}).values()]
        return any(v in t and t != v for t in texts)

    def out_decl(self, p):
        v = "a_" + p["name"]
        local = p["type"][:-1].rstrip()
        decl = f"{local}{v};" if local.endswith("*") else f"{local} {v};"
        lines = [decl, f"unsigned char {v}_was[sizeof {v}];", f"memset(&{v}, SW_BYTE, sizeof {v});"]
        init = self.r.get("out_init", {}).get(p["name"])
        if init:
            lines.append(init.format(v=v))
        lines.append(f"memcpy({v}_was, &{v}, sizeof {v});")
        return lines

    def out_free(self, p):
        v = "a_" + p["name"]
        t = p["type"]
        if t in OUT_FREE:
            return OUT_FREE[t].format(v=v)
        if t.endswith("**") and t.count("*") == 2:
            base = t[:-2].strip()
            if base in self.opaque_free:
                return f"{self.opaque_free[base]}({v});"
        return None

    # -- one case
    def case(self, label, nulled=(), over=None, expect="ok"):
        """expect: "ok", ("invalid", word), or ("value", condition or None)."""
        over = over or {}
        lines = ["{", f"  const char *label = {c_str(label)};"]
        cleanup = []
        args = []
        outs = []
        consumed = self.r.get("consumed", [])
        for p in self.params:
            n = p["name"]
            v = "a_" + n
            if is_out(p):
                if n in nulled:
                    args.append("NULL")
                    continue
                lines += ["  " + x for x in self.out_decl(p)]
                outs.append(p)
                args.append(f"&{v}")
                continue
            if n in nulled and n not in consumed and n not in self.r.get("keep", []) \
                    and not self.referenced(v):
                args.append("NULL")  # a NULL needs no valid one (and a context has none outside a rule)
                continue
            decl, expr, clean = self.arg(p)
            lines += ["  " + x for x in decl]
            if n in nulled:
                args.append("NULL")
                lines.append(f"  (void){v};")
            elif n in over:
                args.append(over[n])
                lines.append(f"  (void){v};")
            else:
                args.append(expr)
            if n not in consumed or n in nulled:
                cleanup = clean + cleanup
        call = f"{self.name}({', '.join(args)})"
        if self.fallible:
            lines.append(f"  smd_error *e = {call};")
        elif self.f["returns"] == "void":
            lines.append(f"  {call};")
        else:
            lines.append(f"  {self.f['returns']}{'' if self.f['returns'].endswith('*') else ' '}r = {call};")

        def written_then_free():
            out = ["    int w = 1;"]
            out += [f'    w &= sw_written(label, "{p["name"]}", &a_{p["name"]}, a_{p["name"]}_was, '
                    f'sizeof a_{p["name"]});' for p in outs]
            present = {"a_" + p["name"] for p in outs}
            frees = [self.out_free(p) for p in outs]
            # (an array whose count was not asked for, NULL, is not freed: only a wrong success
            # gets here without it)
            frees = [x for x in frees if x and ("a_n_out" not in x or "a_n_out" in present)]
            out.append("    (void)w;" if not frees else "    if (w) {")
            if frees:
                out += ["      " + x for x in frees] + ["    }"]
            return out

        if expect == "ok" and not outs:
            lines.append("  sw_ok(label, e);")
        elif expect == "ok":
            lines.append("  if (sw_ok(label, e)) {")
            lines += written_then_free()
            lines.append("  }")
        elif expect[0] == "invalid" and not outs:
            lines.append(f"  sw_invalid(label, {c_str(expect[1])}, e);")
        elif expect[0] == "invalid":
            lines.append(f"  if (sw_invalid(label, {c_str(expect[1])}, e)) {{")
            lines += [f'    sw_unchanged(label, "{p["name"]}", &a_{p["name"]}, a_{p["name"]}_was, '
                      f'sizeof a_{p["name"]});' for p in outs]
            lines.append("  } else {")
            lines += written_then_free()
            lines.append("  }")
        else:
            cond = expect[1]
            if cond is None:
                lines.append("  sw_check(label, 1, \"\");")
            else:
                lines.append(f"  sw_check(label, {cond}, {c_str('returned other than ' + cond)});")
            if self.f["returns"] != "void" and cond is None:
                lines.append("  (void)r;")
        lines += ["  " + x for x in cleanup]
        if self.r.get("after"):
            lines.append("  " + self.r["after"])
        lines.append("}")
        return lines

    def cases(self):
        out = []
        if self.fallible:
            valid = "no_valid_call" not in self.r
            if valid:
                out += self.case(f"{self.name}: valid call")
            else:
                out.append(f"/* no valid call: {self.r['no_valid_call']} */")
            optional = set(self.r.get("optional", []))
            for p in self.params:
                if not is_pointer(p):
                    continue
                label = f"{self.name}: {p['name']} NULL"
                if p["name"] in optional or p["type"] == "void *":
                    if valid:
                        out += self.case(label, nulled=(p["name"],))
                    continue
                word = self.r.get("names", {}).get(p["name"], p["name"])
                out += self.case(label, nulled=(p["name"],), expect=("invalid", word))
            for p in self.params:
                for bad in BAD_ENUM_VALUES.get(p["type"], []):
                    word = self.r.get("names", {}).get(p["name"], p["name"])
                    out += self.case(f"{self.name}: {p['name']} {bad}", over=bad_enum(p, bad),
                                     expect=("invalid", word))
            for label, over, expect in self.r.get("variants", []):
                exp = "ok" if expect == "ok" else ("invalid", expect.split(":", 1)[1])
                nulled = tuple(n for n, x in over.items() if x == "NULL")
                rest = {n: x for n, x in over.items() if x != "NULL"}
                out += self.case(f"{self.name}: {label}", nulled=nulled, over=rest, expect=exp)
        else:
            null = self.r.get("null", {})
            enum = self.r.get("enum", {})
            auto_free = self.name.endswith("_free") and self.f["returns"] == "void"
            for p in self.params:
                if is_pointer(p):
                    if p["name"] not in null and not auto_free:
                        raise Problem(f"no `null` result for {p['name']}")
                    out += self.case(f"{self.name}: {p['name']} NULL", nulled=(p["name"],),
                                     expect=("value", null.get(p["name"])))
                for bad in BAD_ENUM_VALUES.get(p["type"], []):
                    if p["name"] not in enum:
                        raise Problem(f"no `enum` result for {p['name']}")
                    out += self.case(f"{self.name}: {p['name']} {bad}", over=bad_enum(p, bad),
                                     expect=("value", enum[p["name"]]))
        return out


def generate(api):
    functions = api["functions"]
    names = {f["name"] for f in functions}
    opaque_free = {o["name"]: o["name"] + "_free" for o in api["opaque"] if o["name"] + "_free" in names}
    enums = {e["name"] for e in api["enums"]}
    body, entries, problems = [], [], []
    n_cases = 0
    for f in functions:
        name = f["name"]
        recipe = RECIPES.get(name)
        if recipe is None and name.endswith("_free") and f["returns"] == "void":
            recipe = {}
        entries.append(f"sweep_{name}")
        if recipe is None:
            problems.append(f"{name}: no recipe in tests/abi/null_sweep.py (RECIPES): say which of its "
                            "pointer arguments may be NULL and how to make valid ones")
            body += [f"static void sweep_{name}(void) {{",
                     f"  sw_fail({c_str(name)}, {c_str(problems[-1])});", "}", ""]
            continue
        try:
            fn = Function(f, recipe, opaque_free, enums)
            lines = fn.cases()
        except Problem as e:
            problems.append(f"{name}: {e}")
            body += [f"static void sweep_{name}(void) {{",
                     f"  sw_fail({c_str(name)}, {c_str(problems[-1])});", "}", ""]
            continue
        n_cases += sum(1 for x in lines if x == "{")
        extra = [f"  {recipe['extra']}();"] if recipe.get("extra") else []
        if recipe.get("context"):
            where = {"invoke": "SW_IN_INVOKE", "required": "SW_IN_REQUIRED"}[recipe["context"]]
            body.append(f"static void cases_{name}(smd_rule_context *ctx) {{")
            body += ["  " + x for x in lines]
            body += ["}", f"static void sweep_{name}(void) {{", f"  sw_in_context({where}, cases_{name});"]
            body += extra + ["}", ""]
        else:
            body.append(f"static void sweep_{name}(void) {{")
            body += ["  " + x for x in lines] + extra + ["}", ""]
    stale = [f"{n}: a recipe for a function api.json does not list" for n in sorted(set(RECIPES) - names)]
    if stale:
        body.append("static void sweep_recipes(void) {")
        body += [f'  sw_fail("recipes", {c_str(p)});' for p in stale]
        body += ["}", ""]
        entries.append("sweep_recipes")
        problems += stale
    head = ["/* Generated by tests/abi/null_sweep.py from capi/api.json. Do not edit. */",
            f"/* {len(functions)} functions, {n_cases} cases */", ""]
    table = ["static const struct capi_test sweep_tests[] = {", "  TEST_ENTRY(fx_setup),"]
    table += [f"  TEST_ENTRY({e})," for e in entries]
    table += ["  TEST_ENTRY(fx_teardown),", "};"]
    return "\n".join(head + body + table) + "\n", len(functions), n_cases, problems


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: null_sweep.py API_JSON OUT.inc")
    api = json.loads(pathlib.Path(sys.argv[1]).read_text())
    text, n_functions, n_cases, problems = generate(api)
    out = pathlib.Path(sys.argv[2])
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    for p in problems:
        print(f"null_sweep.py: {p}", file=sys.stderr)


if __name__ == "__main__":
    main()
