package io.warden.client;

import io.warden.service.api.LockName;
import io.warden.service.zk.CellPaths;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The SDK's direct mode and the gateway put a lock at the same ZooKeeper path: one function, written twice, checked here. */
class LockNamesPathTest {
    @Test
    void zkPath_isTheGatewaysLockPath() {
        for (String name : List.of("payments/invoice-42", "a/b", "a/b/c/d/e/f/g/h/i", "a/b/0-__WRIT__0000000000",
                "ns-1/x.y:z/a-/9", "n/" + "s".repeat(128))) {
            assertThat(LockNames.zkPath(name)).isEqualTo(CellPaths.lock(LockName.parse(name)));
        }
        for (int i = 0; i < 10_000; i++) {
            String name = "ns/lock-" + i;
            assertThat(LockNames.zkPath(name)).isEqualTo(CellPaths.lock(LockName.parse(name)));
        }
    }
}
