package io.warden.service.api;

/** What happens to a queued request when its {@code wait_ms} runs out. */
public enum OnTimeout {
    /** Remove the request from the queue and answer {@code TIMED_OUT}. */
    CANCEL,
    /** Leave it queued and answer {@code QUEUED} with its position. */
    KEEP
}
