/**
 * Direct mode: Warden's {@link io.warden.client.FencedLock} and {@link io.warden.client.Hold} API for applications
 * that reach ZooKeeper themselves, without a gateway. Start at {@link io.warden.client.direct.DirectLocks}.
 *
 * <p>Needs Curator ({@code org.apache.curator:curator-recipes}) and ZooKeeper on the classpath; the SDK declares them
 * optional, so applications that use only the HTTP client never load them.
 */
package io.warden.client.direct;
