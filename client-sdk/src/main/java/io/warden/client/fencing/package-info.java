/**
 * Fencing: how a resource refuses the writes of a holder whose lock has passed to someone else. Start at
 * {@link io.warden.client.fencing.FencedWrite}.
 */
package io.warden.client.fencing;
