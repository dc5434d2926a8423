package io.warden.client;

/** The SHARED and EXCLUSIVE {@link HttpFencedLock}s of one name. Immutable. */
record HttpReadWriteLock(String name, FencedLock readLock, FencedLock writeLock) implements FencedReadWriteLock {
}
