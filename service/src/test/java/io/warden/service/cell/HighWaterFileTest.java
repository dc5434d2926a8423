package io.warden.service.cell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The high-water mark on disk: written whole, never lowered by another writer, never ignored when unreadable. */
class HighWaterFileTest {
    @TempDir
    Path dataDir;

    @Test
    void noFile_isNoMark_andAWrittenMarkIsReadBack() {
        HighWaterFile file = new HighWaterFile(dataDir, "cell-1");
        assertThat(file.read()).isEmpty();
        file.write(4294967301L, 4294967300L, 1, "gw-1");
        assertThat(file.read()).hasValue(4294967301L);
        assertThat(file.path()).isEqualTo(dataDir.resolve("high-water").resolve("cell-1.json").toAbsolutePath());
        assertThat(dataDir.resolve("high-water").resolve("cell-1.json.tmp")).doesNotExist();
    }

    @Test
    void gatewaysSharingADataDirectory_neverLowerEachOthersMark() {
        HighWaterFile a = new HighWaterFile(dataDir, "cell-1");
        HighWaterFile b = new HighWaterFile(dataDir, "cell-1");
        a.write(900, 900, 0, "gw-a");
        b.write(500, 500, 0, "gw-b");
        assertThat(a.read()).hasValue(900);
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            long token = 1_000 + i;
            HighWaterFile f = new HighWaterFile(dataDir, "cell-1");
            writers.add(CompletableFuture.runAsync(() -> {
                for (int n = 0; n < 20; n++) {
                    f.write(token, token, 0, "gw-" + token);
                }
            }));
        }
        writers.forEach(CompletableFuture::join);
        assertThat(b.read()).hasValue(1_007);
    }

    @Test
    void eachCell_hasItsOwnMark() {
        new HighWaterFile(dataDir, "cell-1").write(900, 900, 0, "gw");
        assertThat(new HighWaterFile(dataDir, "cell-2").read()).isEmpty();
    }

    @Test
    void aFileThatIsNotAMark_isNotIgnored() throws Exception {
        Path file = Files.createDirectories(dataDir.resolve("high-water")).resolve("cell-1.json");
        Files.writeString(file, "garbage");
        assertThatThrownBy(() -> new HighWaterFile(dataDir, "cell-1").read())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(file.toString())
                .hasMessageContaining("Recovering from a rolled-back ensemble");
    }
}
