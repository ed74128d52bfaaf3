package org.switchml.optim;

/** breeze's FirstOrderException: the iteration failed; the machine resets its history once, then gives up. */
final class SearchFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SearchFailure(final String message) {
        super(message, null, false, false);
    }
}
