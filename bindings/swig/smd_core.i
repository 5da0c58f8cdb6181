/* smd_core.i: the language-neutral part of smd's SWIG interface, over the public C headers only.
 *
 * A target language's interface file (python.i; a java.i later) declares the %module, defines the
 * typemaps that turn smd's conventions into the language's idioms, and then %includes this file:
 *   - every opaque handle becomes a proxy class that owns the handle and frees it in its
 *     destructor (declared here, with %nodefaultctor: handles are only made by smd's functions);
 *   - a returned smd_error * becomes an exception (typemap "out" for smd_error *);
 *   - out-parameters become return values (typemaps "in" numinputs=0 + "argout", named after the
 *     parameter names that smd.h's conventions fix: out, steps_out, n_out, ...).
 * The bound functions keep their C names; the language layer above (smd/ in Python) gives them
 * smdebug's names and signatures.
 */

%{
#include "smd/smd.h"
%}

/* Opaque handles: proxy classes with a destructor and no constructor. */
%define SMD_OWNED_HANDLE(TYPE, FREE)
%nodefaultctor TYPE;
struct TYPE {};
%extend TYPE {
  ~TYPE() { FREE($self); }
}
%enddef

SMD_OWNED_HANDLE(smd_storage_options, smd_storage_options_free)
SMD_OWNED_HANDLE(smd_trial, smd_trial_free)
SMD_OWNED_HANDLE(smd_trial_options, smd_trial_options_free)
SMD_OWNED_HANDLE(smd_trial_refresh_scope, smd_trial_refresh_scope_free)
SMD_OWNED_HANDLE(smd_tensor_filter, smd_tensor_filter_free)
SMD_OWNED_HANDLE(smd_tensor, smd_tensor_free)
SMD_OWNED_HANDLE(smd_value, smd_value_free)
SMD_OWNED_HANDLE(smd_collection_info, smd_collection_info_free)
SMD_OWNED_HANDLE(smd_save_config, smd_save_config_free)
SMD_OWNED_HANDLE(smd_reduction_config, smd_reduction_config_free)
SMD_OWNED_HANDLE(smd_hook_options, smd_hook_options_free)
SMD_OWNED_HANDLE(smd_hook, smd_hook_free)
SMD_OWNED_HANDLE(smd_collection, smd_collection_free)
SMD_OWNED_HANDLE(smd_rule, smd_rule_free)
SMD_OWNED_HANDLE(smd_rule_invoke_options, smd_rule_invoke_options_free)
/* Borrowed for the duration of a rule callback: a proxy without ownership. */
%nodefaultctor smd_rule_context;
%nodefaultdtor smd_rule_context;
struct smd_rule_context {};

/* Freed by the proxies, or by the typemaps that convert arrays; not callable from the language. */
%ignore smd_error_free;
%ignore smd_error_code;
%ignore smd_error_message;
%ignore smd_free;
%ignore smd_strarray_free;
%ignore smd_strarray;
%ignore smd_value_array_free;
%ignore smd_storage_options_free;
%ignore smd_trial_free;
%ignore smd_trial_options_free;
%ignore smd_tensor_filter_free;
%ignore smd_tensor_free;
%ignore smd_value_free;
%ignore smd_value_ref;
%ignore smd_collection_info_free;
%ignore smd_value_data;
%ignore smd_value_shape;
%ignore smd_value_to_dlpack;
%ignore smd_dtype_to_dlpack;
%ignore smd_dtype_from_dlpack;
%ignore smd_version;
%ignore smd_save_config_free;
%ignore smd_reduction_config_free;
%ignore smd_hook_options_free;
%ignore smd_hook_free;
%ignore smd_collection_free;
%ignore smd_hook_save_dlpack;
%ignore smd_hook_save_dlpack_managed;
%ignore smd_hook_save_strings;
%ignore smd_hook_save_scalar_typed;
%ignore smd_hook_save_scalar_timestamped;
%ignore smd_hook_writer_stats;
%ignore smd_hook_stats;
%ignore smd_hook_create_from_json;
%ignore smd_rule_free;
%ignore smd_rule_invoke_options_free;
/* Function-pointer callbacks: each language binds them with its own trampolines. */
%ignore smd_rule_create;
%ignore smd_rule_invoke_many;
%ignore smd_rule_invoke_options_set_finding_callback;
%ignore smd_rule_invoke_options_set_progress_callback;
%ignore smd_rule_context_trial;
%ignore smd_rule_context_fail;
%ignore smd_rule_context_fail_with;
%ignore smd_rule_findings_at;

#define SMD_API
#define SMD_NOEXCEPT
#define SMD_MUST_USE

%include "smd/common.h"
%include "smd/storage.h" /* before trial.h and hook.h, which take its options */
%include "smd/trial.h"
%include "smd/tensor.h"
%include "smd/hook.h"
%include "smd/rules.h"
