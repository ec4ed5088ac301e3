CREATE TABLE `idempotency_keys` (
	`actor_id` text NOT NULL,
	`key` text NOT NULL,
	`hash` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`actor_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`event` text NOT NULL,
	`bot_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`data` text,
	`created_at` text NOT NULL,
	`picked_at` text,
	`sends` integer DEFAULT 0 NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE INDEX `outbox_unpicked_idx` ON `outbox` (`picked_at`,`created_at`);--> statement-breakpoint
CREATE INDEX `branches_turn_deadline_idx` ON `branches` (`turn_deadline`);