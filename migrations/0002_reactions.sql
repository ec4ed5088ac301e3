CREATE TABLE `branch_summaries` (
	`branch_id` text PRIMARY KEY NOT NULL,
	`summary` text NOT NULL,
	`covers_up_to` integer NOT NULL,
	`source` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `comments` (
	`id` text PRIMARY KEY NOT NULL,
	`branch_id` text NOT NULL,
	`author_id` text NOT NULL,
	`author_type` text NOT NULL,
	`author_name` text NOT NULL,
	`content` text NOT NULL,
	`parent_comment_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `comments_branch_created_idx` ON `comments` (`branch_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `comments_parent_idx` ON `comments` (`parent_comment_id`);--> statement-breakpoint
CREATE TABLE `pins` (
	`id` text PRIMARY KEY NOT NULL,
	`story_id` text NOT NULL,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`type` text NOT NULL,
	`is_active` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`story_id`) REFERENCES `stories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pins_story_idx` ON `pins` (`story_id`,`is_active`,`created_at`);--> statement-breakpoint
CREATE TABLE `rewrites` (
	`id` text PRIMARY KEY NOT NULL,
	`segment_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`story_id` text NOT NULL,
	`author_id` text NOT NULL,
	`author_type` text NOT NULL,
	`author_name` text NOT NULL,
	`content` text NOT NULL,
	`reason` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`segment_id`) REFERENCES `segments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rewrites_segment_idx` ON `rewrites` (`segment_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `rewrites_author_idx` ON `rewrites` (`author_id`);--> statement-breakpoint
CREATE TABLE `votes` (
	`id` text PRIMARY KEY NOT NULL,
	`voter_id` text NOT NULL,
	`voter_type` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`vote` integer NOT NULL,
	`effective_weight` real NOT NULL,
	`story_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`target_author_id` text,
	`target_author_type` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `votes_voter_target_unique` ON `votes` (`voter_id`,`target_type`,`target_id`);--> statement-breakpoint
CREATE INDEX `votes_target_idx` ON `votes` (`target_type`,`target_id`);--> statement-breakpoint
CREATE INDEX `votes_branch_idx` ON `votes` (`branch_id`,`target_type`);--> statement-breakpoint
CREATE INDEX `votes_target_author_idx` ON `votes` (`target_author_id`,`target_type`);--> statement-breakpoint
CREATE INDEX `votes_story_idx` ON `votes` (`story_id`,`target_type`);