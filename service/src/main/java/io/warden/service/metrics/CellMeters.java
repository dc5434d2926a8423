package io.warden.service.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

/**
 * A view of the gateway's registry for one cell: every meter registered through it carries the tag {@code cell} with
 * the cell's name, so one gateway exports each cell's engine, session and ZooKeeper meters side by side under the same
 * names ({@code warden_grants_total{cell="b"}}). Meters of the gateway as a whole (HTTP, auth, the process) are
 * registered on the gateway's registry itself and carry no cell tag.
 */
public final class CellMeters {
    /** The tag every cell's meter carries. */
    public static final String TAG = "cell";

    private CellMeters() {
    }

    /** A registry that registers into {@code gateway} with {@code cell=name}; removing a meter from it removes it there. */
    public static MeterRegistry tagged(MeterRegistry gateway, String name) {
        CompositeMeterRegistry view = new CompositeMeterRegistry(gateway.config().clock());
        view.config().commonTags(TAG, name);
        view.add(gateway);
        return view;
    }
}
