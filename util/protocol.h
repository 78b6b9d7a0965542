/* SPDX-License-Identifier: MIT */
#pragma once

/* The control socket's limits that alloclabd and its clients both know (docs/protocol.md). */

/* Bytes of a request at most, its NUL included: the daemon refuses a larger one with
 * io.alloclab.MessageTooLarge; a client that knows says so before sending. */
#define PROTOCOL_MAX_REQUEST (1024 * 1024)
