/**
 * Completion queues and their pollers: the agent that owns a CQ and the connections on it, its idle
 * strategies, supervision, and the table that resolves each completion by its wr_id.
 */
package io.reactiverdma.reactive.impl.completion;
