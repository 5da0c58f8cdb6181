package ai.smd;

/**
 * One reason a rule's condition was met: the rule, the global step, the tensor ("" when no single
 * tensor), which trial (0 the base trial), why, and smdebug's one-line notification text.
 */
public record Finding(String rule, long step, String tensor, long trial, String message, String line) {}
