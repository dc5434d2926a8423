package io.warden.service.zk;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A batch stays far below the packet limit of the gateway's ZooKeeper client, whatever that limit is set to. */
class BatchingTest {
    @Test
    void atTheDefaultLimit_theDefaultsStand() {
        Batching b = Batching.DEFAULT.within(new PacketLimit(4 * 1024 * 1024));
        assertThat(b.maxReadBytes()).isEqualTo(256 * 1024);
        assertThat(b.maxBytes()).isEqualTo(256 * 1024);
    }

    @Test
    void aSmallLimit_shrinksEveryBatchToAQuarterOfIt() {
        Batching b = Batching.DEFAULT.within(new PacketLimit(16 * 1024));
        assertThat(b.maxReadBytes()).isEqualTo(4 * 1024);
        assertThat(b.maxBytes()).isEqualTo(4 * 1024);
        assertThat(b.maxOps()).isEqualTo(Batching.DEFAULT.maxOps());
    }

    @Test
    void boundsNearThePacketLimit_areRefused() {
        assertThatThrownBy(() -> new Batching(true, 10, 1024 * 1024, 10, 1024, 1000, 1))
                .hasMessageContaining("packet limit");
    }
}
