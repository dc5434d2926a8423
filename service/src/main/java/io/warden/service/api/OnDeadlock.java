package io.warden.service.api;

/** What a waiting request asks for when it is found in a deadlock (docs/decisions/0013-deadlock-detection.md). */
public enum OnDeadlock {
    /** Keep waiting: the deadlock is reported, and this request is never failed for it. */
    WAIT,
    /** This request may be chosen as the victim: removed, and its call answers 409 {@code DEADLOCK} with the cycle. */
    FAIL
}
