package org.switchml.protocol;

/** Message kinds (low nibble of byte 0). */
public enum Kind {
    /** Worker to switch: a worker's share of one slot use. */
    CONTRIBUTION(1),
    /** Switch to every worker: the completed sum of a slot use. */
    RESULT(2),
    /** Switch to one worker: the stored result, answering a retransmission of a completed slot. */
    RETRANSMIT_RESULT(3);

    private final int code;

    Kind(final int code) {
        this.code = code;
    }

    /** Wire code of this kind. */
    public int code() {
        return code;
    }

    /** The kind with this wire code, or {@code null} if the code is unknown. */
    public static Kind fromCode(final int code) {
        switch (code) {
            case 1:
                return CONTRIBUTION;
            case 2:
                return RESULT;
            case 3:
                return RETRANSMIT_RESULT;
            default:
                return null;
        }
    }
}
