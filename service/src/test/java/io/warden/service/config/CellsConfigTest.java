package io.warden.service.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The cells and routes settings: their text forms, where they may come from, and the rules that tie them to zk. */
class CellsConfigTest {
    @TempDir
    Path dir;

    private final Map<String, String> env = new HashMap<>();

    private WardenConfig load(String... args) {
        return new ConfigLoader(env).load(args);
    }

    private ConfigException failure(String... args) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> load(args));
        assertThat(e).as("expected a ConfigException for %s with env %s", Arrays.toString(args), env).isNotNull();
        assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\r");
        return e;
    }

    private static final String CELLS = "b=zk-b1:2181,zk-b2:2181/warden;c=10.0.0.9:2181";
    private static final List<CellAddress> PARSED = List.of(
            new CellAddress("b", "zk-b1:2181,zk-b2:2181", "/warden"),
            new CellAddress("c", "10.0.0.9:2181", null));

    // ---- defaults and each source ----------------------------------------------------------------------------

    @Test
    void defaults_areNoCellsAndNoRoutes() {
        WardenConfig d = WardenConfig.defaults();
        assertThat(d.cells()).isEmpty();
        assertThat(d.routes()).isEmpty();
        assertThat(load()).isEqualTo(d);
        assertThat(ConfigLoader.usage())
                .contains("--cells NAME=HOST:PORT,.../CHROOT;...").contains("env WARDEN_CELLS, default (none)")
                .contains("--routes NAMESPACE=CELL,...").contains("env WARDEN_ROUTES, default (none)");
    }

    @Test
    void flag_setsCellsAndRoutes() {
        WardenConfig c = load("--zk", "zk-a:2181", "--cells", CELLS, "--routes=orders=b,billing=c,jobs=default");
        assertThat(c.cells()).isEqualTo(PARSED);
        assertThat(c.cells().get(1).chroot()).as("no chroot: the gateway's own --chroot").isNull();
        assertThat(c.routes()).isEqualTo(Map.of("orders", "b", "billing", "c", "jobs", "default"));
        assertThat(c.routes().keySet()).as("sorted by namespace").containsExactly("billing", "jobs", "orders");
        assertThatThrownBy(() -> c.routes().put("x", "b")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> c.cells().add(PARSED.get(0))).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void environment_setsCellsAndRoutes() {
        env.put("WARDEN_ZK_CONNECT", "zk-a:2181");
        env.put("WARDEN_CELLS", CELLS);
        env.put("WARDEN_ROUTES", "orders=b");
        WardenConfig c = load();
        assertThat(c.cells()).isEqualTo(PARSED);
        assertThat(c.routes()).isEqualTo(Map.of("orders", "b"));
    }

    @Test
    void yamlFile_setsCellsAndRoutes() throws IOException {
        Path file = dir.resolve("warden.yaml");
        Files.writeString(file, """
                zk: zk-a:2181
                cells: b=zk-b1:2181,zk-b2:2181/warden;c=10.0.0.9:2181
                routes: orders=b,billing=c
                """);
        WardenConfig c = load("--config", file.toString());
        assertThat(c.cells()).isEqualTo(PARSED);
        assertThat(c.routes()).isEqualTo(Map.of("orders", "b", "billing", "c"));
    }

    @Test
    void emptyText_isNoCellsAndNoRoutes() {
        // an empty flag overrides cells and routes of a file or the environment
        env.put("WARDEN_CELLS", CELLS);
        env.put("WARDEN_ROUTES", "orders=b");
        WardenConfig c = load("--cells=", "--routes", "");
        assertThat(c.cells()).isEmpty();
        assertThat(c.routes()).isEmpty();
        assertThat(c).isEqualTo(WardenConfig.defaults());
    }

    @Test
    void spaces_aroundItems_areDropped() {
        WardenConfig c = load("--cells", " b = zk-b1:2181, zk-b2:2181/warden ; c=10.0.0.9:2181 ",
                "--routes", " orders = b , billing=c");
        assertThat(c.cells()).containsExactly(new CellAddress("b", "zk-b1:2181,zk-b2:2181", "/warden"),
                new CellAddress("c", "10.0.0.9:2181", null));
        assertThat(c.routes()).isEqualTo(Map.of("orders", "b", "billing", "c"));
    }

    // ---- rendering ---------------------------------------------------------------------------------------------

    @Test
    void render_givesTheTextBack_andItParsesToTheSameValue() {
        String routes = "billing=c,jobs=default,orders=b";
        WardenConfig c = load("--cells", CELLS + ";ipv6=[::1]:2182/x/y", "--routes", "orders=b,jobs=default,billing=c");
        String cellsText = Setting.Kind.CELLS.render(c.cells());
        assertThat(cellsText).isEqualTo(CELLS + ";ipv6=[::1]:2182/x/y");
        assertThat(Setting.Kind.ROUTES.render(c.routes())).isEqualTo(routes);
        assertThat(load("--cells", cellsText, "--routes", routes)).isEqualTo(c);
        assertThat(Setting.CELLS.defaultText()).isEqualTo("(none)");
        assertThat(Setting.Kind.CELLS.render(List.of())).isEmpty();
        assertThat(Setting.Kind.ROUTES.render(Map.of())).isEmpty();
        assertThat(c.toString()).contains("cells=[CellAddress[name=b, zkConnect=zk-b1:2181,zk-b2:2181, chroot=/warden], ")
                .contains("routes={billing=c, jobs=default, orders=b}");
    }

    @Test
    void builder_copiesCellsAndRoutes() {
        WardenConfig c = WardenConfig.builder().cells(PARSED).routes(Map.of("orders", "b")).build();
        assertThat(c.toBuilder().httpPort(1).build().cells()).isEqualTo(PARSED);
        assertThat(c.toBuilder().httpPort(1).build().routes()).isEqualTo(Map.of("orders", "b"));
    }

    // ---- bad values: one line naming the setting, the source, what is wrong and what is allowed -----------------

    @ParameterizedTest(name = "--{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "cells  | 'B=zk1:2181'                   | cell name \"B\" does not match [a-z][a-z0-9-]{0,31}",
        "cells  | '9b=zk1:2181'                  | cell name \"9b\" does not match",
        "cells  | 'a23456789012345678901234567890123=zk1:2181' | does not match [a-z][a-z0-9-]{0,31}",
        "cells  | '=zk1:2181'                    | cell name \"\" does not match",
        "cells  | 'default=zk1:2181'             | cell name default is taken by the default cell",
        "cells  | 'b=zk1:2181;b=zk2:2181'        | cell b is given twice",
        "cells  | 'zk1:2181'                     | \"zk1:2181\" does not start with NAME=",
        "cells  | 'b=zk1:2181;'                  | an empty cell",
        "cells  | 'b=zk1:0'                      | cell b has connect string \"zk1:0\", not host:port",
        "cells  | 'b=zk 1:2181'                  | cell b has connect string \"zk 1:2181\"",
        "cells  | 'b=zk1:2181,'                  | cell b has connect string",
        "cells  | 'b='                           | cell b has connect string \"\"",
        "cells  | 'b=/warden'                    | cell b has connect string \"\"",
        "cells  | 'b=zk1:2181/warden/'           | cell b has chroot \"/warden/\", not a ZooKeeper path",
        "cells  | 'b=zk1:2181/a//b'              | cell b has chroot \"/a//b\"",
        "cells  | 'b=zk1:2181/zookeeper/x'       | not under /zookeeper",
        "cells  | 'b=zk1:2181/a/../b'            | cell b has chroot \"/a/../b\"",
        "routes | 'Orders=b'                     | namespace \"Orders\" does not match [a-z][a-z0-9-]{0,62}",
        "routes | 'orders=b,orders=c'            | namespace orders is routed twice",
        "routes | 'orders=B'                     | namespace orders goes to \"B\", not default or a cell name",
        "routes | 'orders'                       | route \"orders\" is not NAMESPACE=CELL",
        "routes | 'orders=b,'                    | an empty route",
    })
    void badValue_namesTheSettingTheSourceWhatIsWrongAndWhatIsAllowed(String key, String value, String reason) {
        ConfigException e = failure("--" + key, value);
        assertThat(e.setting()).isEqualTo(key);
        assertThat(e.getMessage())
                .startsWith("invalid " + key + " " + ConfigLoader.show(value) + " (from flag --" + key + "): ")
                .contains(reason)
                .endsWith("; expected " + Setting.byKey(key).kind().allowed());
    }

    @Test
    void sixteenCells_areAllowed_seventeenAreNot() {
        StringJoiner cells = new StringJoiner(";");
        for (int i = 1; i <= 16; i++) {
            cells.add("c" + i + "=zk" + i + ":2181");
        }
        assertThat(load("--cells", cells.toString()).cells()).hasSize(16);
        cells.add("c17=zk17:2181");
        env.put("WARDEN_CELLS", cells.toString());
        ConfigException e = failure();
        assertThat(e.setting()).isEqualTo("cells");
        assertThat(e.getMessage()).startsWith("invalid cells \"c1=zk1:2181;").contains("(from env WARDEN_CELLS)")
                .contains("17 cells, more than 16; expected ").contains("at most 16 cells");
    }

    @Test
    void aBadFileValue_namesTheKeyAndTheFile() throws IOException {
        Path file = dir.resolve("warden.yaml");
        Files.writeString(file, "cells: default=zk1:2181\n");
        ConfigException e = failure("--config", file.toString());
        assertThat(e.setting()).isEqualTo("cells");
        assertThat(e.getMessage()).startsWith("invalid cells \"default=zk1:2181\" (from key cells in file " + file + "): "
                + "cell name default is taken by the default cell (the ensemble of zk); expected ");
    }

    // ---- cells and routes together, and with zk and chroot ---------------------------------------------------------

    @Test
    void aRouteToAnUnknownCell_namesRoutesTheCellAndTheKnownOnes() {
        ConfigException e = failure("--cells", CELLS, "--routes", "orders=b,jobs=x");
        assertThat(e.setting()).isEqualTo("routes");
        assertThat(e.getMessage()).isEqualTo("routes jobs=x,orders=b (from flag --routes) sends namespace jobs to cell x, "
                + "which is no cell: expected one of default, b, c (cells from flag --cells)");
        ConfigException none = failure("--routes", "orders=b");
        assertThat(none.setting()).isEqualTo("routes");
        assertThat(none.getMessage()).isEqualTo("routes orders=b (from flag --routes) sends namespace orders to cell b, "
                + "which is no cell: expected one of default (cells from default)");
        assertThat(load("--routes", "orders=default").routes()).isEqualTo(Map.of("orders", "default"));
    }

    @Test
    void aCellOnTheDefaultCellsEnsembleAndChroot_isRejected() {
        ConfigException e = failure("--zk", "zk1:2181,zk2:2181", "--cells", "b=zk2:2181,zk1:2181/warden");
        assertThat(e.setting()).isEqualTo("cells");
        assertThat(e.getMessage()).isEqualTo("cells b=zk2:2181,zk1:2181/warden (from flag --cells) puts cell b on the same "
                + "ZooKeeper path as the default cell's: zk zk1:2181,zk2:2181 (from flag --zk) under chroot /warden (from "
                + "default); two cells on one ZooKeeper path would share their lock queues: expected another chroot or "
                + "another ensemble for cell b");
        // no chroot of its own: the cell is under --chroot, the default cell's
        assertThat(failure("--zk", "zk1:2181", "--chroot", "/w", "--cells", "b=zk1:2181").getMessage())
                .contains("puts cell b on the same ZooKeeper path as the default cell's");
        // the same servers written otherwise: ZooKeeper's port 2181 when none is given, host names in any case
        assertThat(failure("--zk", "ZK1", "--cells", "b=zk1:2181/warden").setting()).isEqualTo("cells");
    }

    @Test
    void twoCellsOnOneEnsembleAndChroot_areRejected() {
        ConfigException e = failure("--zk", "zk-a:2181", "--chroot", "/w",
                "--cells", "b=zk1:2181,zk2:2181/w;c=zk2:2181,zk1:2181");
        assertThat(e.setting()).isEqualTo("cells");
        assertThat(e.getMessage()).isEqualTo("cells b=zk1:2181,zk2:2181/w;c=zk2:2181,zk1:2181 (from flag --cells) puts "
                + "cell c on the same ZooKeeper path as cell b's: zk1:2181,zk2:2181 under /w (chroot from flag --chroot); "
                + "two cells on one ZooKeeper path would share their lock queues: expected another chroot or another "
                + "ensemble for cell c");
        // with the embedded ZooKeeper too
        assertThat(failure("--cells", "b=zk1:2181/x;c=zk1:2181/x").getMessage())
                .contains("puts cell c on the same ZooKeeper path as cell b's: zk1:2181 under /x;");
    }

    @Test
    void aCellOnTheDefaultCellsEnsembleUnderAnotherChroot_isAccepted() {
        WardenConfig c = load("--zk", "zk1:2181,zk2:2181", "--cells", "b=zk1:2181,zk2:2181/warden-b;c=zk1:2181/warden",
                "--routes", "orders=b");
        assertThat(c.cells()).extracting(CellAddress::name).containsExactly("b", "c");
        // two cells on one ensemble under different chroots
        assertThat(load("--zk", "zk-a:2181", "--cells", "b=zk1:2181/b;c=zk1:2181/c").cells()).hasSize(2);
    }

    @Test
    void cellsWithTheEmbeddedZooKeeper_areAllowed() {
        WardenConfig c = load("--cells", "b=127.0.0.1:2181/warden", "--routes", "orders=b");
        assertThat(c.zkConnect()).isNull();
        assertThat(c.cells()).containsExactly(new CellAddress("b", "127.0.0.1:2181", "/warden"));
    }
}
