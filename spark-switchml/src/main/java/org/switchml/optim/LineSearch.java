package org.switchml.optim;

/** What one evaluation during a line search leads to. */
enum LineSearch {
    /** Evaluate at the next trial step ({@link OptimizerState#step}). */
    CONTINUE,
    /** Accept the step just evaluated. */
    ACCEPT_LAST,
    /** Accept the current step, which was not the last one evaluated: evaluate it once more. */
    ACCEPT_OTHER
}
