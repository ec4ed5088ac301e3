ALTER TABLE `bots` ADD `owner_id` text;--> statement-breakpoint
CREATE INDEX `bots_owner_idx` ON `bots` (`owner_id`);