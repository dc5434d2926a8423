package io.warden.console.model;

/** A lock request's mode. */
public enum Mode { EXCLUSIVE, SHARED, SEMAPHORE }
