CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`actor_id` text NOT NULL,
	`actor_name` text NOT NULL,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`reason` text,
	`detail` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_created_idx` ON `audit_log` (`created_at`);--> statement-breakpoint
CREATE INDEX `audit_log_target_idx` ON `audit_log` (`target_type`,`target_id`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`reporter_id` text NOT NULL,
	`reporter_type` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`reason` text NOT NULL,
	`note` text,
	`status` text DEFAULT 'open' NOT NULL,
	`resolution` text,
	`resolved_by` text,
	`resolution_note` text,
	`resolved_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reports_open_unique` ON `reports` (`reporter_id`,`target_type`,`target_id`) WHERE status = 'open';--> statement-breakpoint
CREATE INDEX `reports_status_created_idx` ON `reports` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `reports_target_idx` ON `reports` (`target_type`,`target_id`);--> statement-breakpoint
CREATE INDEX `reports_reporter_created_idx` ON `reports` (`reporter_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `revoked_sessions` (
	`jti` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `revoked_sessions_expires_idx` ON `revoked_sessions` (`expires_at`);--> statement-breakpoint
ALTER TABLE `bots` ADD `suspended_at` text;--> statement-breakpoint
ALTER TABLE `bots` ADD `suspended_until` text;--> statement-breakpoint
ALTER TABLE `bots` ADD `suspension_reason` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `hidden_at` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `hidden_by` text;--> statement-breakpoint
ALTER TABLE `branches` ADD `hidden_reason` text;--> statement-breakpoint
ALTER TABLE `comments` ADD `hidden_at` text;--> statement-breakpoint
ALTER TABLE `comments` ADD `hidden_by` text;--> statement-breakpoint
ALTER TABLE `comments` ADD `hidden_reason` text;--> statement-breakpoint
ALTER TABLE `segments` ADD `hidden_at` text;--> statement-breakpoint
ALTER TABLE `segments` ADD `hidden_by` text;--> statement-breakpoint
ALTER TABLE `segments` ADD `hidden_reason` text;--> statement-breakpoint
ALTER TABLE `stories` ADD `hidden_at` text;--> statement-breakpoint
ALTER TABLE `stories` ADD `hidden_by` text;--> statement-breakpoint
ALTER TABLE `stories` ADD `hidden_reason` text;--> statement-breakpoint
ALTER TABLE `users` ADD `role` text DEFAULT 'user' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `suspended_at` text;--> statement-breakpoint
ALTER TABLE `users` ADD `suspended_until` text;--> statement-breakpoint
ALTER TABLE `users` ADD `suspension_reason` text;