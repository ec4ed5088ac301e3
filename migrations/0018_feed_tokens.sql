CREATE TABLE `feed_tokens` (
	`account_id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `feed_tokens_token_hash_unique` ON `feed_tokens` (`token_hash`);