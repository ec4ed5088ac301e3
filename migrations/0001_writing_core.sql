CREATE TABLE `branch_members` (
	`branch_id` text NOT NULL,
	`bot_id` text NOT NULL,
	`story_id` text NOT NULL,
	`role` text NOT NULL,
	`join_seq` integer NOT NULL,
	`joined_at` text NOT NULL,
	PRIMARY KEY(`branch_id`, `bot_id`),
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `branch_members_story_idx` ON `branch_members` (`story_id`,`bot_id`);--> statement-breakpoint
CREATE INDEX `branch_members_bot_idx` ON `branch_members` (`bot_id`);--> statement-breakpoint
CREATE TABLE `branches` (
	`id` text PRIMARY KEY NOT NULL,
	`story_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`is_main` integer DEFAULT false NOT NULL,
	`parent_branch_id` text,
	`fork_at_segment_id` text,
	`fork_sequence` integer DEFAULT 0 NOT NULL,
	`creator_id` text NOT NULL,
	`creator_type` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`segments_count` integer DEFAULT 0 NOT NULL,
	`active_bots_count` integer DEFAULT 0 NOT NULL,
	`vote_score` real DEFAULT 0 NOT NULL,
	`current_turn_bot_id` text,
	`turn_deadline` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`story_id`) REFERENCES `stories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `branches_story_created_idx` ON `branches` (`story_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `branches_parent_idx` ON `branches` (`parent_branch_id`);--> statement-breakpoint
CREATE TABLE `logs` (
	`id` text PRIMARY KEY NOT NULL,
	`story_id` text NOT NULL,
	`branch_id` text NOT NULL,
	`segment_id` text NOT NULL,
	`author_id` text NOT NULL,
	`author_type` text NOT NULL,
	`author_name` text NOT NULL,
	`content_length` integer NOT NULL,
	`is_continuation` text NOT NULL,
	`parent_segment_id` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `logs_created_idx` ON `logs` (`created_at`);--> statement-breakpoint
CREATE INDEX `logs_story_created_idx` ON `logs` (`story_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `logs_author_type_created_idx` ON `logs` (`author_type`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `logs_segment_unique` ON `logs` (`segment_id`);--> statement-breakpoint
CREATE TABLE `segments` (
	`id` text PRIMARY KEY NOT NULL,
	`branch_id` text NOT NULL,
	`story_id` text NOT NULL,
	`author_id` text NOT NULL,
	`author_type` text NOT NULL,
	`author_name` text NOT NULL,
	`content` text NOT NULL,
	`content_length` integer NOT NULL,
	`sequence_order` integer NOT NULL,
	`coherence_score` real,
	`is_starter` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`branch_id`) REFERENCES `branches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `segments_branch_sequence_unique` ON `segments` (`branch_id`,`sequence_order`);--> statement-breakpoint
CREATE INDEX `segments_story_idx` ON `segments` (`story_id`);--> statement-breakpoint
CREATE INDEX `segments_author_idx` ON `segments` (`author_id`);--> statement-breakpoint
CREATE TABLE `stories` (
	`id` text PRIMARY KEY NOT NULL,
	`title` text NOT NULL,
	`background` text NOT NULL,
	`starter` text NOT NULL,
	`style_rules` text,
	`language` text DEFAULT 'zh' NOT NULL,
	`min_length` integer NOT NULL,
	`max_length` integer NOT NULL,
	`owner_id` text NOT NULL,
	`owner_type` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`story_pack` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stories_status_created_idx` ON `stories` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `stories_owner_idx` ON `stories` (`owner_id`);