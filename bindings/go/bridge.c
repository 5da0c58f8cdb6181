/* C trampolines between smd's callbacks and the Go functions exported by rules.go. The payload
 * is a cgo.Handle (an integer), never a Go pointer. */
#include <stdint.h>
#include "smd/smd.h"
#include "_cgo_export.h"

void *smdgo_payload(uintptr_t handle) { return (void *)handle; }

int smdgo_rule_invoke(smd_rule_context *ctx, int64_t step, bool *condition_met, void *payload) {
  return goRuleInvoke(ctx, step, condition_met, (uintptr_t)payload);
}

int smdgo_rule_required(smd_rule_context *ctx, int64_t step, void *payload) {
  return goRuleRequired(ctx, step, (uintptr_t)payload);
}

int smdgo_finding(const smd_rule *rule, const smd_rule_finding *finding, void *payload) {
  return goFinding((smd_rule *)rule, (smd_rule_finding *)finding, (uintptr_t)payload);
}

int smdgo_progress(const smd_rule *rule, int64_t step, smd_rule_outcome outcome, void *payload) {
  return goProgress((smd_rule *)rule, step, (int)outcome, (uintptr_t)payload);
}
