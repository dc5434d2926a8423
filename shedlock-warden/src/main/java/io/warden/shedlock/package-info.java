/**
 * ShedLock on Warden: {@link io.warden.shedlock.WardenLockProvider} is ShedLock's {@code LockProvider} (and
 * {@code ExtensibleLockProvider}) on a {@link io.warden.client.WardenClient}, so a scheduled job runs on one node at a
 * time with a fencing token; {@link io.warden.shedlock.WardenShedLock} gives the running job its token and hold.
 */
package io.warden.shedlock;
