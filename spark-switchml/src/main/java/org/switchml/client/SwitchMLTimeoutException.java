package org.switchml.client;

import org.switchml.protocol.SwitchMLException;

/**
 * No result arrived within the bound: names the job, rank, switch endpoint and the missing slot.
 */
public final class SwitchMLTimeoutException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    private final int missingSlot;

    public SwitchMLTimeoutException(final String message, final int missingSlot) {
        super(message);
        this.missingSlot = missingSlot;
    }

    /** The slot whose result was still missing. */
    public int missingSlot() {
        return missingSlot;
    }
}
