package io.warden.service.api;

/**
 * The answer to adding a cell ({@code PUT /v1/cells/{cell}}): the cell as this gateway serves it now, and whether this
 * call added it (false: it was there already, at the same ensemble and chroot). Concurrency: immutable.
 */
public record CellAdded(CellView cell, boolean created) {
}
