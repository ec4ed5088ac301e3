CREATE TABLE `bookmarks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`segment_id` text NOT NULL,
	`note` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`segment_id`) REFERENCES `segments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bookmarks_account_segment_unique` ON `bookmarks` (`account_id`,`segment_id`);--> statement-breakpoint
CREATE INDEX `bookmarks_account_created_idx` ON `bookmarks` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `reading_progress` (
	`account_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`segment_id` text NOT NULL,
	`sequence_order` integer NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `branch_id`),
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reading_progress_account_updated_idx` ON `reading_progress` (`account_id`,`updated_at`,`branch_id`);