package io.warden.client.direct;

import io.warden.client.FencedLock;
import io.warden.client.FencedReadWriteLock;

/** The SHARED and EXCLUSIVE {@link DirectFencedLock}s of one name. Immutable. */
record DirectReadWriteLock(String name, FencedLock readLock, FencedLock writeLock) implements FencedReadWriteLock {
}
