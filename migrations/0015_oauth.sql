CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`actor_id` text NOT NULL,
	`actor_type` text NOT NULL,
	`client_id` text NOT NULL,
	`client_name` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scope` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_person_idx` ON `oauth_grants` (`person_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `oauth_grants_actor_idx` ON `oauth_grants` (`actor_id`);--> statement-breakpoint
CREATE TABLE `oauth_kv` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `oauth_kv_expires_idx` ON `oauth_kv` (`expires_at`);