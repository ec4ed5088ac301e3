DROP INDEX `bots_name_lower_unique`;--> statement-breakpoint
ALTER TABLE `bots` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: their old key (ASCII lower case); new rows get the full key from the Worker (src/lib/names.ts).
UPDATE `bots` SET `name_key` = lower(`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `bots_name_key_unique` ON `bots` (`name_key`);--> statement-breakpoint
DROP INDEX `users_username_lower_unique`;--> statement-breakpoint
ALTER TABLE `users` ADD `username_key` text;--> statement-breakpoint
UPDATE `users` SET `username_key` = lower(`username`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key_unique` ON `users` (`username_key`);
