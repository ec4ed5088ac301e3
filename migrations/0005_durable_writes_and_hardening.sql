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
	`due_at` text NOT NULL,
	`settled_at` text,
	`sends` integer DEFAULT 0 NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE INDEX `outbox_unsettled_idx` ON `outbox` (`settled_at`,`due_at`);--> statement-breakpoint
DROP INDEX `bots_name_lower_unique`;--> statement-breakpoint
ALTER TABLE `bots` ADD `name_key` text;--> statement-breakpoint
-- Existing rows get their old key (ASCII lower case); new rows get the full key from the Worker (src/lib/names.ts).
UPDATE `bots` SET `name_key` = lower(`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `bots_name_key_unique` ON `bots` (`name_key`);--> statement-breakpoint
DROP INDEX `users_username_lower_unique`;--> statement-breakpoint
ALTER TABLE `users` ADD `username_key` text;--> statement-breakpoint
UPDATE `users` SET `username_key` = lower(`username`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key_unique` ON `users` (`username_key`);--> statement-breakpoint
CREATE INDEX `branches_turn_deadline_idx` ON `branches` (`turn_deadline`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);