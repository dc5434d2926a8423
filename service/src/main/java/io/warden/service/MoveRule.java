package io.warden.service;

/**
 * How a move keeps a namespace's tokens growing ({@link CellMoves}): by raising the new cell's token floor above the
 * old cell's tokens ({@link #CONTRACT}). A seam, as the other {@link Rules}, for the proof suite's gateway that skips the
 * raise on purpose, to show its fencing checker failing.
 */
@FunctionalInterface
public interface MoveRule {
    MoveRule CONTRACT = () -> true;

    /** Whether a move raises the new cell's token floor above the old cell's tokens (guarantee 2 of docs/guarantees.md: tokens only grow). */
    boolean raisesFloor();
}
